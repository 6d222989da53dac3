// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace memledger {

// How writeFileAtomically (core/formats/preset.h) puts the bytes of its temporary
// file on disk: all of `contents` to `fd`, or false with errno set. Tests
// swap it for one that writes into /dev/full (ENOSPC) to prove that a
// device failing mid-save leaves the old file intact; nothing else should.
using FileWriter = bool (*)(int fd, std::string_view contents);

bool writeAll(int fd, std::string_view contents); // the default: write(2) until done, retrying EINTR

// Installs `writer` (nullptr: the default) and returns the one it replaces.
FileWriter setFileWriterForTesting(FileWriter writer);

} // namespace memledger
