// SPDX-License-Identifier: MIT
// ByteSource: the same bytes whether read from memory or a file, plain or
// gzip-compressed, in any chunk size; peek never consumes; truncated and
// corrupt gzip data are errors, never garbage.
#include "core/trace/bytesource.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <zlib.h>

using namespace memledger;
namespace fs = std::filesystem;

namespace {

// Somewhat compressible bytes, like a pickle: repeated words and some noise.
std::string sampleBytes(std::size_t n)
{
    std::mt19937 rng(7);
    std::string s;
    s.reserve(n);
    const char *words[] = {"alloc", "free_completed", "/usr/lib/python3/torch/nn/modules/linear.py", "forward"};
    while (s.size() < n) {
        s += words[rng() % 4];
        s += static_cast<char>(rng() % 256);
    }
    s.resize(n);
    return s;
}

std::string gzip(std::string_view data)
{
    z_stream zs{};
    REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&zs, static_cast<uLong>(data.size())) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

// Everything the source yields, read `chunk` bytes at a time.
std::string drain(ByteSource &source, std::size_t chunk)
{
    std::string all, buf(chunk, '\0');
    while (std::size_t got = source.read(buf.data(), chunk))
        all.append(buf.data(), got);
    return all;
}

fs::path writeTemp(const std::string &name, const std::string &bytes)
{
    const fs::path path = fs::temp_directory_path() / ("memledger-bytesource-" + name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

} // namespace

TEST_CASE("ByteSource reads memory as it is, in any chunk size", "[trace][bytesource]")
{
    const std::string data = sampleBytes(3'000'001);
    for (std::size_t chunk : {std::size_t{1} << 0, std::size_t{7}, std::size_t{65536}, std::size_t{5'000'000}}) {
        if (chunk == 1 && data.size() > 100'000)
            continue; // byte at a time is tested on the small input below
        auto source = ByteSource::fromMemory(data);
        CHECK(source->bytesTotal() == data.size());
        CHECK(drain(*source, chunk) == data);
        CHECK(source->error().empty());
        CHECK(source->bytesConsumed() == data.size());
    }
    auto small = ByteSource::fromMemory("abc");
    CHECK(drain(*small, 1) == "abc");
    auto empty = ByteSource::fromMemory("");
    CHECK(empty->peek(4).empty());
    CHECK(drain(*empty, 16).empty());
    CHECK(empty->error().empty());
}

TEST_CASE("ByteSource gunzips transparently, peek shows the decompressed start", "[trace][bytesource]")
{
    const std::string data = sampleBytes(3'000'001);
    const std::string packed = gzip(data);
    REQUIRE(packed.size() < data.size());
    auto source = ByteSource::fromMemory(packed);
    CHECK(source->peek(5) == std::string_view(data).substr(0, 5));
    CHECK(source->peek(2) == std::string_view(data).substr(0, 2)); // peeking twice consumes nothing
    CHECK(source->bytesTotal() == packed.size());
    CHECK(drain(*source, 4093) == data);
    CHECK(source->error().empty());
    CHECK(source->bytesConsumed() == packed.size());
}

TEST_CASE("ByteSource reads concatenated gzip members as one stream", "[trace][bytesource]")
{
    const std::string a = sampleBytes(1000), b = "second member";
    const std::string packed = gzip(a) + gzip(b); // fromMemory does not own its bytes
    auto source = ByteSource::fromMemory(packed);
    CHECK(drain(*source, 333) == a + b);
    CHECK(source->error().empty());
}

TEST_CASE("Truncated or corrupt gzip data is an error, never silent garbage", "[trace][bytesource]")
{
    const std::string data = sampleBytes(20'000);
    const std::string packed = gzip(data);
    // Every cut of the compressed stream (stepping through the middle) ends in an error.
    for (std::size_t cut = 2; cut < packed.size(); cut += (cut < 64 || cut > packed.size() - 64) ? 1 : 97) {
        INFO("cut at " << cut);
        const std::string truncated = packed.substr(0, cut);
        auto source = ByteSource::fromMemory(truncated);
        const std::string got = drain(*source, 1000);
        CHECK_FALSE(source->error().empty());
        CHECK(got.size() <= data.size());
        CHECK(data.compare(0, got.size(), got) == 0);
    }
    std::string corrupt = packed;
    for (std::size_t i = 20; i < 60; ++i)
        corrupt[i] = static_cast<char>(~corrupt[i]);
    auto source = ByteSource::fromMemory(corrupt);
    (void)drain(*source, 1000);
    CHECK(source->error().find("gzip") != std::string::npos);
}

TEST_CASE("ByteSource reads files, plain and gzip-compressed", "[trace][bytesource]")
{
    const std::string data = sampleBytes(2'500'000);
    for (const bool compressed : {false, true}) {
        const std::string bytes = compressed ? gzip(data) : data;
        const fs::path path = writeTemp(compressed ? "a.gz" : "a.bin", bytes);
        std::string error;
        auto source = ByteSource::openFile(path.string(), error);
        REQUIRE(source);
        CHECK(error.empty());
        CHECK(source->bytesTotal() == bytes.size());
        CHECK(source->peek(3) == std::string_view(data).substr(0, 3));
        CHECK(drain(*source, 100'000) == data);
        CHECK(source->error().empty());
        CHECK(source->bytesConsumed() == bytes.size());
        source.reset();
        fs::remove(path);
    }
    std::string error;
    CHECK_FALSE(ByteSource::openFile("/nonexistent/memledger.pickle", error));
    CHECK(error.find("cannot open /nonexistent/memledger.pickle") == 0);
    CHECK_FALSE(ByteSource::openFile(fs::temp_directory_path().string(), error));
    CHECK(error.find("directory") != std::string::npos);
}
