// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"

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
// What a slide opens on: an inline slide's optional "show" object,
// {"view": "memory" | "lifetimes" | "ledger", "lifetimes": "training" |
// "prefill" | "decode"}. Empty fields leave the window as it is.
struct SlideShow
{
    std::string view;
    std::string lifetimes; // only with view "lifetimes"
    bool operator==(const SlideShow &) const = default;
};
inline constexpr std::string_view kSlideViews[] = {"memory", "lifetimes", "ledger"};
inline constexpr std::string_view kSlideLifetimes[] = {"training", "prefill", "decode"};

struct Deck
{
    std::string name;
    std::string description;
    std::vector<Config> slides;
    std::vector<SlideShow> shows; // per slide
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
