// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace memledger {

// A stream of bytes read in chunks from a file or from memory, gunzipped on
// the fly when it starts with the gzip magic (1f 8b), so that importers never
// hold a whole trace file in memory.
class ByteSource
{
public:
    virtual ~ByteSource() = default;

    // nullptr and `error` set ("cannot open FILE: reason") when it cannot be opened.
    static std::unique_ptr<ByteSource> openFile(const std::string &path, std::string &error);
    // Does not own `bytes`: they must outlive the source.
    static std::unique_ptr<ByteSource> fromMemory(std::string_view bytes);

    // Up to `n` bytes into `buffer`; 0 at the end or on an error (see error()).
    virtual std::size_t read(char *buffer, std::size_t n) = 0;
    // Empty unless reading failed (I/O error, corrupt or truncated gzip data).
    virtual const std::string &error() const = 0;
    // Bytes of the underlying file consumed so far, and its size: for progress.
    virtual std::uint64_t bytesConsumed() const = 0;
    virtual std::uint64_t bytesTotal() const = 0;
    // The first bytes of the (decompressed) stream, without consuming them: for telling formats apart.
    virtual std::string_view peek(std::size_t n) = 0;
};

} // namespace memledger
