// SPDX-License-Identifier: MIT
// A full disk without a full disk: RLIMIT_FSIZE makes the kernel refuse
// writes past a size (EFBIG), root or not. Shared by the core and GUI save tests.
#pragma once

#include <catch2/catch.hpp>
#include <csignal>
#include <sys/resource.h>

namespace memledger::test {

struct FileSizeLimit
{
    rlimit previous{};
    void (*handler)(int);
    explicit FileSizeLimit(rlim_t bytes)
    {
        handler = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of the default kill
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &previous) == 0);
        rlimit small = previous;
        small.rlim_cur = bytes;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    }
    ~FileSizeLimit()
    {
        ::setrlimit(RLIMIT_FSIZE, &previous);
        std::signal(SIGXFSZ, handler);
    }
    FileSizeLimit(const FileSizeLimit &) = delete;
    FileSizeLimit &operator=(const FileSizeLimit &) = delete;
};

} // namespace memledger::test
