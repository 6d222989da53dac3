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
        : m_file(file)
        , m_name(std::move(name))
        , m_total(fileSize)
        , m_chunk(kFileChunk)
    {
        detectGzip();
    }

    explicit StreamSource(std::string_view bytes)
        : m_memory(bytes)
        , m_total(bytes.size())
    {
        detectGzip();
    }

    ~StreamSource() override
    {
        if (m_gzip)
            inflateEnd(&m_zs);
        if (m_file)
            std::fclose(m_file);
    }

    StreamSource(const StreamSource &) = delete;
    StreamSource &operator=(const StreamSource &) = delete;

    std::size_t read(char *buffer, std::size_t n) override
    {
        std::size_t done = 0;
        if (m_peekPos < m_peeked.size()) {
            done = std::min(n, m_peeked.size() - m_peekPos);
            std::memcpy(buffer, m_peeked.data() + m_peekPos, done);
            m_peekPos += done;
            if (m_peekPos == m_peeked.size()) {
                m_peeked.clear();
                m_peekPos = 0;
            }
        }
        return done + readDecoded(buffer + done, n - done);
    }

    const std::string &error() const override { return m_error; }
    std::uint64_t bytesConsumed() const override { return m_handedOut - m_inLen; }
    std::uint64_t bytesTotal() const override { return m_total; }

    std::string_view peek(std::size_t n) override
    {
        while (m_peeked.size() - m_peekPos < n) {
            const std::size_t have = m_peeked.size();
            const std::size_t want = std::min<std::size_t>(n - (have - m_peekPos), kFileChunk);
            m_peeked.resize(have + want);
            const std::size_t got = readDecoded(m_peeked.data() + have, want);
            m_peeked.resize(have + got);
            if (got == 0)
                break;
        }
        return std::string_view(m_peeked).substr(m_peekPos, n);
    }

private:
    void detectGzip()
    {
        if (!fillRaw() || m_inLen < 2)
            return;
        if (static_cast<unsigned char>(m_in[0]) != 0x1f || static_cast<unsigned char>(m_in[1]) != 0x8b)
            return;
        // 15 + 16: a gzip wrapper around a deflate stream with a 32 KiB window.
        if (inflateInit2(&m_zs, 15 + 16) != Z_OK) {
            m_error = "cannot start gzip decompression: out of memory";
            return;
        }
        m_gzip = true;
    }

    // Makes unread raw bytes available in [m_in, m_in + m_inLen); false at the
    // end of the input or on a read error.
    bool fillRaw()
    {
        if (m_inLen > 0)
            return true;
        if (!m_error.empty())
            return false;
        if (m_file) {
            const std::size_t got = std::fread(m_chunk.data(), 1, m_chunk.size(), m_file);
            if (got == 0) {
                if (std::ferror(m_file))
                    m_error = "cannot read " + m_name + ": " + std::strerror(errno);
                return false;
            }
            m_in = m_chunk.data();
            m_inLen = got;
        } else {
            const std::size_t offset = static_cast<std::size_t>(m_handedOut);
            if (offset >= m_memory.size())
                return false;
            m_in = m_memory.data() + offset;
            m_inLen = std::min(m_memory.size() - offset, kZlibPiece);
        }
        m_handedOut += m_inLen;
        return true;
    }

    std::size_t readDecoded(char *out, std::size_t n)
    {
        if (!m_error.empty())
            return 0;
        std::size_t done = 0;
        if (!m_gzip) {
            while (done < n && fillRaw()) {
                const std::size_t k = std::min(n - done, m_inLen);
                std::memcpy(out + done, m_in, k);
                m_in += k;
                m_inLen -= k;
                done += k;
            }
            return done;
        }
        while (done < n && m_error.empty()) {
            if (m_memberDone) {
                // gzip allows several members back to back (cat a.gz b.gz).
                if (!fillRaw())
                    break;
                inflateReset(&m_zs);
                m_memberDone = false;
            }
            if (m_inLen == 0 && !fillRaw()) {
                if (m_error.empty())
                    m_error = "truncated gzip data: the file ends inside the compressed stream";
                break;
            }
            m_zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(m_in));
            m_zs.avail_in = static_cast<uInt>(m_inLen);
            m_zs.next_out = reinterpret_cast<Bytef *>(out + done);
            m_zs.avail_out = static_cast<uInt>(std::min<std::size_t>(n - done, UINT_MAX));
            const uInt outBefore = m_zs.avail_out;
            const int rc = inflate(&m_zs, Z_NO_FLUSH);
            done += outBefore - m_zs.avail_out;
            m_in = reinterpret_cast<const char *>(m_zs.next_in);
            m_inLen = m_zs.avail_in;
            if (rc == Z_STREAM_END) {
                m_memberDone = true;
            } else if (rc == Z_BUF_ERROR || rc == Z_OK) {
                // Progress was made, or more input is needed: the loop refills.
            } else {
                m_error = "corrupt gzip data near byte " + std::to_string(bytesConsumed()) + ": "
                          + (m_zs.msg ? m_zs.msg : "inflate failed");
            }
        }
        return done;
    }

    std::FILE *m_file = nullptr;
    std::string m_name;
    std::string_view m_memory;
    std::uint64_t m_total = 0;
    std::uint64_t m_handedOut = 0; ///< raw bytes made available so far
    std::vector<char> m_chunk; ///< a file's raw bytes, one chunk at a time
    const char *m_in = nullptr;
    std::size_t m_inLen = 0;
    bool m_gzip = false;
    bool m_memberDone = false;
    z_stream m_zs{};
    std::string m_peeked;
    std::size_t m_peekPos = 0;
    std::string m_error;
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
