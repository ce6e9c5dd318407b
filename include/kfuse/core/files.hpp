// Files named by users, checked before they are opened, and made durable
// after they are written (POSIX).
//
// Opening a FIFO for reading blocks until someone writes to it; a directory
// opens but reads as garbage. Readers therefore accept regular files only.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfuse/core/error.hpp"

namespace kfuse::detail {

/// "" when `path` is a regular file (or does not exist, unless `must_exist`),
/// else what it is instead.
inline std::string not_regular_file(const std::string& path, bool must_exist) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return must_exist || errno != ENOENT
               ? error_message("cannot open '", path, "': ", std::strerror(errno))
               : std::string();
  if (S_ISREG(info.st_mode)) return {};
  const char* kind = S_ISDIR(info.st_mode)    ? "a directory"
                     : S_ISFIFO(info.st_mode) ? "a FIFO (named pipe)"
                     : S_ISSOCK(info.st_mode) ? "a socket"
                     : S_ISCHR(info.st_mode)  ? "a character device"
                     : S_ISBLK(info.st_mode)  ? "a block device"
                                              : "not a regular file";
  return error_message("'", path, "' is ", kind, "; give the path of a regular file");
}

/// Flushes a written file to its storage device (fsync): "" or the error.
inline std::string sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return error_message("cannot open '", path, "' to sync it: ", std::strerror(errno));
  std::string error;
  if (::fsync(fd) != 0) error = error_message("cannot sync '", path, "': ", std::strerror(errno));
  ::close(fd);
  return error;
}

/// Flushes the directory entry of `path` (after a rename): "" or the error.
/// Filesystems that cannot sync a directory (EINVAL, ENOTSUP) count as done.
inline std::string sync_directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string directory =
      slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return error_message("cannot open directory '", directory, "': ", std::strerror(errno));
  std::string error;
  if (::fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP)
    error = error_message("cannot sync directory '", directory, "': ", std::strerror(errno));
  ::close(fd);
  return error;
}

}  // namespace kfuse::detail
