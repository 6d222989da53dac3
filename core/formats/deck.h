// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"
#include "core/problem.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// A deck is an ordered list of presets for talk mode (presets/README.md,
// "Decks"): {"format": "memledger-deck", "version": 1, "name", "description",
// "slides": ["scenario-name" | {preset object}, ...]}. Every slide is loaded
// and validated; a problem names its slide ("slides[3].parallelism.zero_stage").
struct Deck
{
    std::string name;
    std::string description;
    std::vector<Config> slides;
};

struct DeckLoadResult
{
    std::optional<Deck> deck; // set only when no slide has an error
    Problems problems; // errors, and the slides' validation warnings
};

DeckLoadResult deckFromJson(const nlohmann::json &doc);
DeckLoadResult deckFromText(std::string_view text, std::string_view origin = "deck");
DeckLoadResult deckFromFile(const std::string &path);

} // namespace memledger
