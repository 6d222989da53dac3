// SPDX-License-Identifier: MIT
#include "core/formats/deck.h"

#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/jsontext.h"
#include "core/formats/preset.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

namespace memledger {

using nlohmann::json;

namespace {

void addPrefixed(Problems &out, const Problems &in, const std::string &prefix)
{
    for (Problem p : in) {
        p.path = p.path.empty() ? prefix : prefix + "." + p.path;
        out.push_back(std::move(p));
    }
}

// A slide's "show": where the talk opens it. Each key a string among its choices.
SlideShow loadShow(const json &show, const std::string &where, Problems &problems)
{
    SlideShow out;
    if (!show.is_object()) {
        problems.push_back({where, "expected an object, got " + describeJson(show),
                            R"({"view": "lifetimes", "lifetimes": "prefill"})"});
        return out;
    }
    const auto choice = [&](const char *key, const auto &choices, std::string &into) {
        const auto it = show.find(key);
        if (it == show.end())
            return;
        std::string list;
        for (std::string_view c : choices)
            list += (list.empty() ? "" : ", ") + std::string(c);
        const bool known = it->is_string()
                           && std::find(std::begin(choices), std::end(choices), it->template get<std::string>())
                                  != std::end(choices);
        if (!known) {
            problems.push_back({where + "." + key, "expected one of " + list + ", got " + describeJson(*it)});
            return;
        }
        into = it->template get<std::string>();
    };
    for (auto it = show.begin(); it != show.end(); ++it)
        if (it.key() != "view" && it.key() != "lifetimes")
            problems.push_back({where + "." + it.key(), "unknown field", "a slide's show has view and lifetimes"});
    choice("view", kSlideViews, out.view);
    choice("lifetimes", kSlideLifetimes, out.lifetimes);
    if (!out.lifetimes.empty() && out.view != "lifetimes")
        problems.push_back({where + ".lifetimes", "applies to the lifetimes view only", R"(add "view": "lifetimes")"});
    return out;
}

// One slide: a built-in scenario by name, or a preset object (whose
// "format" and "version" may be left out inside a deck, and which may say
// what the talk shows of it in "show").
std::optional<Config> loadSlide(const json &slide, const std::string &where, Problems &problems, SlideShow &show)
{
    LoadResult loaded;
    if (slide.is_string()) {
        const std::string name = slide.get<std::string>();
        const BuiltinPreset *b = findBuiltin("scenarios", name);
        if (!b) {
            std::string known;
            for (const std::string &n : builtinNames("scenarios"))
                known += (known.empty() ? "" : ", ") + n;
            problems.push_back({where, "no built-in scenario named \"" + name + "\"", "built-in scenarios: " + known});
            return std::nullopt;
        }
        loaded = presetFromText(b->text, name);
    } else if (slide.is_object()) {
        json doc = slide;
        if (const auto it = doc.find("show"); it != doc.end()) {
            show = loadShow(*it, where + ".show", problems);
            doc.erase("show");
        }
        if (!doc.contains("format"))
            doc["format"] = "memledger-preset";
        if (!doc.contains("version"))
            doc["version"] = 1;
        loaded = presetFromJson(doc);
    } else {
        problems.push_back(
            {where, "expected the name of a built-in scenario or a preset object, got " + describeJson(slide)});
        return std::nullopt;
    }
    addPrefixed(problems, loaded.problems, where);
    if (!loaded.config)
        return std::nullopt;
    // A slide must have a ledger to show, so an impossible split is an error here too.
    const Problems issues = validate(*loaded.config);
    addPrefixed(problems, issues, where);
    if (hasErrors(issues))
        return std::nullopt;
    return loaded.config;
}

} // namespace

DeckLoadResult deckFromJson(const json &doc)
{
    DeckLoadResult result;
    Problems &problems = result.problems;
    if (!doc.is_object()) {
        problems.push_back({"", "a deck must be a JSON object, got " + describeJson(doc)});
        return result;
    }
    static const std::set<std::string> kTopLevel = {"format", "version", "name", "description", "slides"};
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (!kTopLevel.count(it.key()))
            problems.push_back({it.key(), "unknown field", "a deck has format, version, name, description and slides"});
    const auto format = doc.find("format");
    if (format == doc.end() || !format->is_string() || format->get<std::string>() != "memledger-deck")
        problems.push_back(
            {"format", format == doc.end() ? "missing" : "expected \"memledger-deck\", got " + describeJson(*format),
             "add \"format\": \"memledger-deck\""});
    const auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_integer())
        problems.push_back({"version",
                            version == doc.end() ? "missing" : "expected an integer, got " + describeJson(*version),
                            "add \"version\": 1"});
    else if (version->get<std::int64_t>() != 1)
        problems.push_back({"version", "this MemLedger reads version 1, the file has version " + version->dump(),
                            version->get<std::int64_t>() > 1 ? "update MemLedger" : ""});

    Deck deck;
    for (const char *key : {"name", "description"}) {
        const auto it = doc.find(key);
        if (it == doc.end())
            continue;
        if (!it->is_string())
            problems.push_back({key, "expected a string, got " + describeJson(*it)});
        else
            (std::string_view(key) == "name" ? deck.name : deck.description) = it->get<std::string>();
    }
    const auto slides = doc.find("slides");
    if (slides == doc.end() || !slides->is_array() || slides->empty()) {
        problems.push_back({"slides",
                            slides == doc.end()  ? "missing"
                            : slides->is_array() ? "is empty"
                                                 : "expected a list, got " + describeJson(*slides),
                            "a list of built-in scenario names or preset objects"});
    } else {
        for (std::size_t i = 0; i < slides->size(); ++i) {
            SlideShow show;
            std::optional<Config> c = loadSlide((*slides)[i], "slides[" + std::to_string(i) + "]", problems, show);
            if (c) {
                deck.slides.push_back(std::move(*c));
                deck.shows.push_back(std::move(show));
            }
        }
    }
    if (!hasErrors(problems))
        result.deck = std::move(deck);
    return result;
}

DeckLoadResult deckFromText(std::string_view text, std::string_view origin)
{
    DeckLoadResult r;
    const std::optional<json> doc = parseJsonText(text, origin, r.problems);
    return doc ? deckFromJson(*doc) : r;
}

DeckLoadResult deckFromFile(const std::string &path)
{
    DeckLoadResult r;
    const std::optional<std::string> text = readTextFile(path, r.problems);
    return text ? deckFromText(*text, path) : r;
}

} // namespace memledger
