// SPDX-License-Identifier: MIT
#include "core/trace/bytesource.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>
#include <zlib.h>

namespace memledger {

namespace {

constexpr std::size_t kFileChunk = std::size_t{1} << 20;
// zlib counts in 32-bit uInt: memory is handed to it in pieces of this size.
constexpr std::size_t kZlibPiece = std::size_t{1} << 30;

// One source for both kinds of input: the raw bytes come from a FILE or from
// memory, and are inflated when they start with the gzip magic.
class StreamSource final : public ByteSource
{
public:
    StreamSource(std::FILE *file, std::uint64_t fileSize, std::string name)
        : file_(file)
        , name_(std::move(name))
        , total_(fileSize)
        , chunk_(kFileChunk)
    {
        detectGzip();
    }

    explicit StreamSource(std::string_view bytes)
        : memory_(bytes)
        , total_(bytes.size())
    {
        detectGzip();
    }

    ~StreamSource() override
    {
        if (gzip_)
            inflateEnd(&zs_);
        if (file_)
            std::fclose(file_);
    }

    StreamSource(const StreamSource &) = delete;
    StreamSource &operator=(const StreamSource &) = delete;

    std::size_t read(char *buffer, std::size_t n) override
    {
        std::size_t done = 0;
        if (peekPos_ < peeked_.size()) {
            done = std::min(n, peeked_.size() - peekPos_);
            std::memcpy(buffer, peeked_.data() + peekPos_, done);
            peekPos_ += done;
            if (peekPos_ == peeked_.size()) {
                peeked_.clear();
                peekPos_ = 0;
            }
        }
        return done + readDecoded(buffer + done, n - done);
    }

    const std::string &error() const override { return error_; }
    std::uint64_t bytesConsumed() const override { return handedOut_ - inLen_; }
    std::uint64_t bytesTotal() const override { return total_; }

    std::string_view peek(std::size_t n) override
    {
        while (peeked_.size() - peekPos_ < n) {
            const std::size_t have = peeked_.size();
            const std::size_t want = std::min<std::size_t>(n - (have - peekPos_), kFileChunk);
            peeked_.resize(have + want);
            const std::size_t got = readDecoded(peeked_.data() + have, want);
            peeked_.resize(have + got);
            if (got == 0)
                break;
        }
        return std::string_view(peeked_).substr(peekPos_, n);
    }

private:
    void detectGzip()
    {
        if (!fillRaw() || inLen_ < 2)
            return;
        if (static_cast<unsigned char>(in_[0]) != 0x1f || static_cast<unsigned char>(in_[1]) != 0x8b)
            return;
        // 15 + 16: a gzip wrapper around a deflate stream with a 32 KiB window.
        if (inflateInit2(&zs_, 15 + 16) != Z_OK) {
            error_ = "cannot start gzip decompression: out of memory";
            return;
        }
        gzip_ = true;
    }

    // Makes unread raw bytes available in [in_, in_ + inLen_); false at the
    // end of the input or on a read error.
    bool fillRaw()
    {
        if (inLen_ > 0)
            return true;
        if (!error_.empty())
            return false;
        if (file_) {
            const std::size_t got = std::fread(chunk_.data(), 1, chunk_.size(), file_);
            if (got == 0) {
                if (std::ferror(file_))
                    error_ = "cannot read " + name_ + ": " + std::strerror(errno);
                return false;
            }
            in_ = chunk_.data();
            inLen_ = got;
        } else {
            const std::size_t offset = static_cast<std::size_t>(handedOut_);
            if (offset >= memory_.size())
                return false;
            in_ = memory_.data() + offset;
            inLen_ = std::min(memory_.size() - offset, kZlibPiece);
        }
        handedOut_ += inLen_;
        return true;
    }

    std::size_t readDecoded(char *out, std::size_t n)
    {
        if (!error_.empty())
            return 0;
        std::size_t done = 0;
        if (!gzip_) {
            while (done < n && fillRaw()) {
                const std::size_t k = std::min(n - done, inLen_);
                std::memcpy(out + done, in_, k);
                in_ += k;
                inLen_ -= k;
                done += k;
            }
            return done;
        }
        while (done < n && error_.empty()) {
            if (memberDone_) {
                // gzip allows several members back to back (cat a.gz b.gz).
                if (!fillRaw())
                    break;
                inflateReset(&zs_);
                memberDone_ = false;
            }
            if (inLen_ == 0 && !fillRaw()) {
                if (error_.empty())
                    error_ = "truncated gzip data: the file ends inside the compressed stream";
                break;
            }
            zs_.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in_));
            zs_.avail_in = static_cast<uInt>(inLen_);
            zs_.next_out = reinterpret_cast<Bytef *>(out + done);
            zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(n - done, UINT_MAX));
            const uInt outBefore = zs_.avail_out;
            const int rc = inflate(&zs_, Z_NO_FLUSH);
            done += outBefore - zs_.avail_out;
            in_ = reinterpret_cast<const char *>(zs_.next_in);
            inLen_ = zs_.avail_in;
            if (rc == Z_STREAM_END) {
                memberDone_ = true;
            } else if (rc == Z_BUF_ERROR || rc == Z_OK) {
                // Progress was made, or more input is needed: the loop refills.
            } else {
                error_ = "corrupt gzip data near byte " + std::to_string(bytesConsumed()) + ": "
                         + (zs_.msg ? zs_.msg : "inflate failed");
            }
        }
        return done;
    }

    std::FILE *file_ = nullptr;
    std::string name_;
    std::string_view memory_;
    std::uint64_t total_ = 0;
    std::uint64_t handedOut_ = 0; ///< raw bytes made available so far
    std::vector<char> chunk_; ///< a file's raw bytes, one chunk at a time
    const char *in_ = nullptr;
    std::size_t inLen_ = 0;
    bool gzip_ = false;
    bool memberDone_ = false;
    z_stream zs_{};
    std::string peeked_;
    std::size_t peekPos_ = 0;
    std::string error_;
};

} // namespace

std::unique_ptr<ByteSource> ByteSource::openFile(const std::string &path, std::string &error)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        error = "cannot open " + path + ": it is a directory";
        return nullptr;
    }
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (!file) {
        error = "cannot open " + path + ": " + std::strerror(errno);
        return nullptr;
    }
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    auto source = std::make_unique<StreamSource>(file, ec ? 0 : static_cast<std::uint64_t>(size), path);
    if (!source->error().empty()) {
        error = source->error();
        return nullptr;
    }
    return source;
}

std::unique_ptr<ByteSource> ByteSource::fromMemory(std::string_view bytes)
{
    return std::make_unique<StreamSource>(bytes);
}

} // namespace memledger
