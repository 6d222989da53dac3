// SPDX-License-Identifier: MIT
// writeFileAtomically (declared in core/formats/preset.h, where savers find it):
// temporary file beside the target, written, flushed to the device, then
// renamed over the target. Any failure removes the temporary and leaves the
// target as it was; rename is atomic within a directory.
#include "core/formats/atomicfile.h"

#include "core/formats/preset.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace memledger {

namespace {

FileWriter g_writer = &writeAll;

std::string reason(const std::string &what)
{
    return what + ": " + std::strerror(errno);
}

} // namespace

bool writeAll(int fd, std::string_view contents)
{
    while (!contents.empty()) {
        const ssize_t n = ::write(fd, contents.data(), contents.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        contents.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

FileWriter setFileWriterForTesting(FileWriter writer)
{
    const FileWriter previous = g_writer;
    g_writer = writer ? writer : &writeAll;
    return previous;
}

std::string writeFileAtomically(const std::string &path, std::string_view contents)
{
    std::string tmp = path + ".tmp-XXXXXX";
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0)
        return reason("cannot create a temporary file beside " + path);
    // mkstemp makes the file 0600; a saved preset is as readable as the one it replaces.
    struct stat old
    { };
    const mode_t mode = ::stat(path.c_str(), &old) == 0 ? (old.st_mode & 07777) : 0644;
    std::string error;
    if (::fchmod(fd, mode) != 0)
        error = reason("cannot set the permissions of " + tmp);
    else if (!g_writer(fd, contents))
        error = reason("cannot write " + tmp);
    else if (::fsync(fd) != 0) // a full device may only say so here
        error = reason("cannot flush " + tmp);
    if (::close(fd) != 0 && error.empty())
        error = reason("cannot close " + tmp);
    if (error.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
        error = reason("cannot replace " + path);
    if (!error.empty())
        ::unlink(tmp.c_str());
    return error;
}

} // namespace memledger
