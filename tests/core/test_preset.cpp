// SPDX-License-Identifier: MIT
// The preset format: round trips, built-in references, and bad input that
// must be refused with a message naming the field.
#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

Problems problemsOf(const std::string &text)
{
    const LoadResult r = presetFromText(text, "test.json");
    CHECK_FALSE(r.config.has_value()); // never a partial result
    return r.problems;
}

bool mentions(const Problems &problems, const std::string &path)
{
    for (const Problem &p : problems)
        if (p.path == path)
            return true;
    return false;
}

} // namespace

TEST_CASE("Every built-in preset loads, validates and round-trips", "[preset]")
{
    for (const BuiltinPreset &b : builtinPresets()) {
        if (b.kind == "decks")
            continue; // lists of presets, tested in test_deck.cpp
        CAPTURE(b.kind, b.name);
        const LoadResult first = presetFromText(b.text, b.name);
        for (const Problem &p : first.problems)
            UNSCOPED_INFO(p.toString());
        REQUIRE(first.config.has_value());
        CHECK(first.config->name == b.name);
        if (b.kind == "scenarios")
            CHECK_FALSE(hasErrors(validate(*first.config)));
        const LoadResult second = presetFromText(presetToText(*first.config), "round trip");
        REQUIRE(second.config.has_value());
        CHECK(*second.config == *first.config);
    }
}

TEST_CASE("A section may name a built-in preset", "[preset]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "llama-2-70b";
    doc["hardware"] = "H200-141GB";
    const LoadResult r = presetFromJson(doc);
    REQUIRE(r.config.has_value());
    CHECK(r.config->model.num_layers == 80);
    CHECK(r.config->model.num_query_groups == 8);
    CHECK(r.config->hardware.name == "H200-141GB");

    doc["model"] = "llama-9";
    const LoadResult bad = presetFromJson(doc);
    CHECK_FALSE(bad.config.has_value());
    REQUIRE(mentions(bad.problems, "model"));
    CHECK(bad.problems[0].suggestion.find("llama-2-70b") != std::string::npos);
}

TEST_CASE("Missing fields take their defaults", "[preset]")
{
    const LoadResult r = presetFromText(R"({"format": "memledger-preset", "version": 1})");
    REQUIRE(r.config.has_value());
    CHECK(*r.config == Config{});
    // The documented hardware default is the H100 built-in, field for field.
    const LoadResult h100 = presetFromText(findBuiltin("hardware", "H100-SXM-80GB")->text);
    REQUIRE(h100.config.has_value());
    CHECK(h100.config->hardware == HardwareConfig{});
}

TEST_CASE("Overrides (--set) change a field before the preset is read", "[preset]")
{
    nlohmann::json doc = scenarioDoc("llama-3-70b-128xh100");
    CHECK(applyOverride(doc, "parallelism.tensor_model_parallel_size=4").empty());
    CHECK(applyOverride(doc, "training.params_dtype=fp16").empty()); // bare string
    CHECK(applyOverride(doc, "model.num_layers=40").empty()); // expands the built-in reference
    CHECK(applyOverride(doc, "hardware.hbm_bytes=1000000000000").empty());
    const LoadResult r = presetFromJson(doc);
    REQUIRE(r.config.has_value());
    CHECK(r.config->parallelism.tensor_model_parallel_size == 4);
    CHECK(r.config->training.params_dtype == Dtype::FP16);
    CHECK(r.config->model.num_layers == 40);
    CHECK(r.config->model.hidden_size == 8192); // the rest of llama-3-70b kept
    CHECK(r.config->hardware.hbm_bytes == 1000000000000);

    // A whole section by a built-in's name.
    CHECK(applyOverride(doc, "hardware=H200-141GB").empty());
    const LoadResult h200 = presetFromJson(doc);
    REQUIRE(h200.config.has_value());
    CHECK(h200.config->hardware.name == "H200-141GB");
    CHECK(applyOverride(doc, "hardware=H300").empty());
    CHECK(mentions(presetFromJson(doc).problems, "hardware"));
    CHECK(applyOverride(doc, "hardware=H100-SXM-80GB").empty());

    CHECK(mentions(applyOverride(doc, "nonsense"), "nonsense"));
    CHECK(mentions(applyOverride(doc, "gpu.count=8"), "gpu"));
    CHECK(applyOverride(doc, "parallelism.tensor_model_paralel_size=4").empty());
    CHECK(mentions(presetFromJson(doc).problems, "parallelism.tensor_model_paralel_size"));
}

TEST_CASE("Bad input is refused with a message naming the field", "[preset][input]")
{
    const std::string head = R"({"format": "memledger-preset", "version": 1, )";
    SECTION("malformed and truncated JSON")
    {
        for (const std::string &text :
             {std::string("{"), std::string("{\"format\": \"memledger-preset\", \"version\": 1,"),
              std::string("not json"), std::string(""), head + R"("model": {"num_layers": 32,})"}) {
            CAPTURE(text);
            const Problems p = problemsOf(text);
            REQUIRE(p.size() == 1);
            CHECK(p[0].message.rfind("not valid JSON", 0) == 0);
        }
    }
    SECTION("not a preset")
    {
        CHECK(mentions(problemsOf("[1, 2]"), ""));
        CHECK(mentions(problemsOf(R"({"version": 1})"), "format"));
        CHECK(mentions(problemsOf(R"({"format": "something-else", "version": 1})"), "format"));
        CHECK(mentions(problemsOf(R"({"format": "memledger-preset", "version": 2})"), "version"));
        CHECK(mentions(problemsOf(R"({"format": "memledger-preset"})"), "version"));
    }
    SECTION("wrong types")
    {
        CHECK(mentions(problemsOf(head + R"("model": {"num_layers": "32"}})"), "model.num_layers"));
        CHECK(mentions(problemsOf(head + R"("model": {"hidden_size": 4096.5}})"), "model.hidden_size"));
        CHECK(mentions(problemsOf(head + R"("model": {"swiglu": 1}})"), "model.swiglu"));
        CHECK(mentions(problemsOf(head + R"("training": {"params_dtype": "bf17"}})"), "training.params_dtype"));
        CHECK(mentions(problemsOf(head + R"("parallelism": []})"), "parallelism"));
        CHECK(mentions(problemsOf(head + R"("name": 7})"), "name"));
        CHECK(mentions(problemsOf(head + R"("strategy": {"flash_attention": null}})"), "strategy.flash_attention"));
        CHECK(mentions(problemsOf(head + R"("hardware": {"gemm_efficiency": 0.8}})"), "hardware.gemm_efficiency"));
        CHECK(mentions(problemsOf(head + R"("hardware": {"gemm_efficiency": [[1e9]]}})"), "hardware.gemm_efficiency"));
        CHECK(mentions(problemsOf(head + R"("hardware": {"hbm_efficiency": [[1e9, "high"]]}})"),
                       "hardware.hbm_efficiency"));
        CHECK(mentions(problemsOf(head + R"("strategy": {"overlap_grad_reduce": "yes"}})"),
                       "strategy.overlap_grad_reduce"));
        CHECK(mentions(problemsOf(head + R"("strategy": {"overlap_param_gather": 1}})"),
                       "strategy.overlap_param_gather"));
        CHECK(mentions(problemsOf(head + R"("strategy": {"overlap_p2p_comm": "yes"}})"), "strategy.overlap_p2p_comm"));
        CHECK(mentions(problemsOf(head + R"("strategy": {"fp8_param_gather": 1}})"), "strategy.fp8_param_gather"));
    }
    SECTION("negative, zero and out-of-range values")
    {
        CHECK(mentions(problemsOf(head + R"("model": {"num_layers": -1}})"), "model.num_layers"));
        CHECK(mentions(problemsOf(head + R"("model": {"hidden_size": 0}})"), "model.hidden_size"));
        CHECK(mentions(problemsOf(head + R"("parallelism": {"tensor_model_parallel_size": 0}})"),
                       "parallelism.tensor_model_parallel_size"));
        CHECK(mentions(problemsOf(head + R"("parallelism": {"zero_stage": 4}})"), "parallelism.zero_stage"));
        CHECK(mentions(problemsOf(head + R"("model": {"attention_dropout": 1.5}})"), "model.attention_dropout"));
        CHECK(mentions(problemsOf(head + R"("hardware": {"hbm_bytes": -80}})"), "hardware.hbm_bytes"));
        CHECK(mentions(problemsOf(head + R"("training": {"seq_length": 1e30}})"), "training.seq_length"));
    }
    SECTION("unknown keys, anywhere")
    {
        CHECK(mentions(problemsOf(head + R"("modle": {}})"), "modle"));
        CHECK(mentions(problemsOf(head + R"("model": {"num_layer": 32}})"), "model.num_layer"));
        CHECK(mentions(problemsOf(head + R"("hardware": {"hbm_gb": 80}})"), "hardware.hbm_gb"));
    }
    SECTION("every problem at once")
    {
        const Problems p = problemsOf(
            head
            + R"("model": {"num_layers": "x", "hidden_size": -4, "colour": 1}, "training": {"optimizer": "lion"}})");
        CHECK(p.size() == 4);
    }
}

TEST_CASE("Saves are atomic: a failed save leaves the old file intact", "[preset][files]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("memledger-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string path = (dir / "plan.json").string();
    const Config c = scenario("llama-3-70b-128xh100");
    REQUIRE(writeFileAtomically(path, presetToText(c)).empty());
    const LoadResult back = presetFromFile(path);
    REQUIRE(back.config.has_value());
    CHECK(*back.config == c);

    // A target that cannot be replaced (a directory) fails and leaves no temporary behind.
    const std::string blocked = (dir / "blocked").string();
    fs::create_directories(blocked + "/inside");
    CHECK_FALSE(writeFileAtomically(blocked, "{}").empty());
    CHECK(fs::is_directory(blocked));
    // A missing directory fails cleanly too, and the first file is untouched.
    CHECK_FALSE(writeFileAtomically((dir / "no" / "such.json").string(), "{}").empty());
    CHECK(*presetFromFile(path).config == c);
    std::size_t files = 0;
    for (const auto &entry : fs::directory_iterator(dir))
        files += entry.is_regular_file();
    CHECK(files == 1);
    fs::remove_all(dir);
    CHECK(mentions(presetFromFile((dir / "gone.json").string()).problems, (dir / "gone.json").string()));
}

TEST_CASE("strategy.allocator: PyTorch's allocator settings read, written when set, and reached by --set",
          "[preset][allocator]")
{
    nlohmann::json doc = memledger::test::scenarioDoc("llama-3-70b-128xh100");
    // Absent: PyTorch's defaults, not saved in the file (only what differs
    // from the defaults is), and written whole for the programs that read a plan.
    const memledger::Config plain = memledger::test::configFrom(doc);
    CHECK(plain.strategy.allocator == memledger::AllocatorConfig{});
    CHECK(memledger::presetToText(plain).find("allocator") == std::string::npos);
    CHECK(memledger::presetToJson(plain)["strategy"]["allocator"] == nlohmann::json{{"expandable_segments", false}});

    const memledger::Config set = memledger::test::configFrom(
        doc, {"strategy.allocator.expandable_segments=true", "strategy.allocator.max_split_size_mb=512"});
    CHECK(set.strategy.allocator.expandable_segments);
    CHECK(set.strategy.allocator.max_split_size_mb == 512);
    const nlohmann::json written = memledger::presetToJson(set)["strategy"]["allocator"];
    CHECK(written == nlohmann::json{{"expandable_segments", true}, {"max_split_size_mb", 512}});
    // null unsets a limit.
    const memledger::Config unset
        = memledger::test::configFrom(memledger::presetToJson(set), {"strategy.allocator.max_split_size_mb=null"});
    CHECK_FALSE(unset.strategy.allocator.max_split_size_mb.has_value());

    // Bad values name the field.
    const auto problemsOf = [&](const std::string &assignment) {
        nlohmann::json d = doc;
        REQUIRE(memledger::applyOverride(d, assignment).empty());
        memledger::LoadResult r = memledger::presetFromJson(d);
        memledger::Problems all = r.problems;
        if (r.config)
            for (const memledger::Problem &p : memledger::validate(*r.config))
                all.push_back(p);
        std::string text;
        for (const memledger::Problem &p : all)
            text += p.toString() + "\n";
        return text;
    };
    CHECK_THAT(problemsOf("strategy.allocator.expandable_segments=\"yes\""),
               Catch::Contains("strategy.allocator.expandable_segments"));
    CHECK_THAT(problemsOf("strategy.allocator.max_split_size_mb=8"),
               Catch::Contains("strategy.allocator.max_split_size_mb"));
    CHECK_THAT(problemsOf("strategy.allocator.garbage_collection_threshold=1"),
               Catch::Contains("strategy.allocator.garbage_collection_threshold"));
    CHECK_THAT(problemsOf("strategy.allocator.roundup=4"),
               Catch::Contains("strategy.allocator.roundup: unknown field"));
    CHECK_THAT(problemsOf("strategy.allocator=true"), Catch::Contains("strategy.allocator"));
}

TEST_CASE("A saved preset names its built-in model and device, keeps the sections in order and writes what differs",
          "[preset][save]")
{
    // Issue 34, item 20: a saved GPT-3 file inlined the whole model (gaining
    // kv_lora_rank and the moe_* fields), sorted the sections and lost
    // "model": "gpt-3-175b". Files are diffed and shared: they keep the references.
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const LoadResult loaded = presetFromText(findBuiltin("scenarios", name)->text, name);
        REQUIRE(loaded.config.has_value());
        const std::string text = presetToText(*loaded.config);
        const LoadResult again = presetFromText(text);
        REQUIRE(again.config.has_value());
        CHECK(*again.config == *loaded.config); // the same plan back
    }
    const LoadResult gpt = presetFromText(findBuiltin("scenarios", "gpt-3-175b-64gpus-tp-only")->text);
    REQUIRE(gpt.config.has_value());
    const std::string text = presetToText(*gpt.config);
    INFO(text);
    CHECK(text.find("\"model\": \"gpt-3-175b\"") != std::string::npos);
    CHECK(text.find("\"hardware\": \"A100-SXM-80GB\"") != std::string::npos);
    CHECK(text.find("kv_lora_rank") == std::string::npos);
    CHECK(text.find("moe_") == std::string::npos);
    // Sections in the order people write them, not sorted.
    const std::size_t m = text.find("\"model\""), t = text.find("\"training\""), p = text.find("\"parallelism\""),
                      s = text.find("\"strategy\""), h = text.find("\"hardware\"");
    CHECK((m < t && t < p && p < s && s < h));
    // A default left out: the shipped file sets no recompute, so none is written.
    CHECK(text.find("recompute_granularity") == std::string::npos);

    // An edited model is no built-in's: written out, only what differs from the defaults.
    Config edited = *gpt.config;
    edited.model.num_layers = 48;
    const std::string own = presetToText(edited);
    CHECK(own.find("\"model\": \"gpt-3-175b\"") == std::string::npos);
    CHECK(own.find("\"num_layers\": 48") != std::string::npos);
    CHECK(own.find("kv_lora_rank") == std::string::npos);
    const LoadResult back = presetFromText(own);
    REQUIRE(back.config.has_value());
    CHECK(back.config->model == edited.model);
}
