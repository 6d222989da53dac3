// SPDX-License-Identifier: MIT
// cat and append copy their parts straight into a string sized once; they
// must give exactly what a chain of std::string's + and += gives.
#include "core/base/textcat.h"
#include "core/base/units.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

using namespace memledger;

TEST_CASE("cat gives what a chain of + gives", "[units]")
{
    const std::string longPart(40, 'x'); // past the short-string buffer
    const std::string_view view = "view";
    const char *cstr = "c string";
    const std::string empty;
    CHECK(cat() == std::string());
    CHECK(cat("") == std::string());
    CHECK(cat(empty, "", empty) == std::string());
    CHECK(cat("a", empty, "b") == "ab");
    CHECK(cat(cstr, " + ", view, " + ", longPart) == std::string(cstr) + " + " + std::string(view) + " + " + longPart);
    // A count with its noun, written on the stack, is a part like any other.
    CHECK(cat(CountText(2, "layer", "layers"), " × ", CountText(1, "stage", "stages")) == "2 layers × 1 stage");
    CHECK(cat(CountText(12000, "layer", "layers")) == countOf(12000, "layer", "layers"));
    const std::string joined = cat(longPart, longPart, "tail");
    CHECK(joined.size() == 84);
    CHECK(joined == longPart + longPart + "tail");
}

TEST_CASE("append grows a string as += does", "[units]")
{
    std::string built, expected;
    // Grown many times in a loop (as the balancing rows list their pairs):
    // each call may reallocate, and what was there stays.
    for (int i = 0; i < 200; ++i) {
        const std::string n = std::to_string(i);
        append(built, built.empty() ? "" : ", ", "rank ", n, " (", std::string(static_cast<std::size_t>(i % 7), 'z'),
               ")");
        expected += (expected.empty() ? "" : ", ") + std::string("rank ") + n + " ("
                    + std::string(static_cast<std::size_t>(i % 7), 'z') + ")";
        REQUIRE(built == expected);
    }
    std::string unchanged = "kept";
    append(unchanged);
    append(unchanged, "", std::string());
    CHECK(unchanged == "kept");
}
