// faultshim: an LD_PRELOAD library that counts the file system calls of a process, by kind,
// and makes exactly the k-th call of one kind fail with a chosen errno. scripts/faults/sweep
// runs squeeze under it once counting only, to learn how many calls of each kind a run
// makes, then once for every k (or an even sample of them) with that call failing.
//
// Build:  gcc -O2 -Wall -Wextra -shared -fPIC -o faultshim.so faultshim.c -ldl
// Use:    LD_PRELOAD=./faultshim.so SQUEEZE_FAULT_COUNTS=counts.bin
//           SQUEEZE_FAULT_KIND=write SQUEEZE_FAULT_AT=3 SQUEEZE_FAULT_ERRNO=EIO squeeze DIR
//
// SQUEEZE_FAULT_COUNTS  a file the counts are kept in while the process runs (mapped
//                       shared, so they are there even after _exit or a crash): one
//                       little-endian uint64 per kind in the order of `kinds` below, then
//                       the number of the call that was failed (0 when none was), then
//                       the errno it was failed with
// SQUEEZE_FAULT_KIND    the kind to fail (one of `kinds`); unset: count only
// SQUEEZE_FAULT_AT      k, counted from 1, over every thread of the process
// SQUEEZE_FAULT_ERRNO   a name from `errnos` (EIO, ENOSPC, ...) or a number
// SQUEEZE_FAULT_KILL    when set and not empty, the chosen call is neither made nor failed:
//                       the process kills itself (SIGKILL) in its place, as a `kill -9`
//                       that lands just before that call
// SQUEEZE_FAULT_PATH    only calls on a path containing this text count towards k (a
//                       descriptor's path is read from /proc/self/fd); the counts file
//                       still counts every call
// SQUEEZE_FAULT_REPORT  a file the failed call is described in, one line: its kind, its
//                       number, the errno and the path it was on (a descriptor's path is
//                       read from /proc/self/fd)
// SQUEEZE_FAULT_LOG     a file every counted call is appended to, one line each: its kind,
//                       a tab and its path as given (a descriptor's read from /proc/self/fd);
//                       the sweep's --coverage compares it with strace's view of the run
//
// What counts: calls on files, folders and links. A call that names a path counts unless
// the path is under /proc, /sys or /dev (the runtime's and the kernel's own files); a call
// on a descriptor counts only when the descriptor has such a path, so the pipes, eventfds
// and terminals Dispatch and the standard descriptors use are never failed. The kinds:
// open (open, openat, creat, openat2), read (read, pread, readv, preadv), write, sync
// (fsync, fdatasync, syncfs), rename, link, unlink (unlink, unlinkat, rmdir), mkdir,
// fchmod, fchown, utimens, getdents, close, symlink, stat (stat, lstat, fstat, fstatat,
// statx) and readlink.
// squeeze makes openat2, renameat2, syncfs and getdents64 through syscall(2), which is
// wrapped too. A failed call does nothing and returns -1 with errno, except close, which
// (as Linux's does, whatever it reports) always releases the descriptor.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind {
  K_OPEN, K_READ, K_WRITE, K_SYNC, K_RENAME, K_LINK, K_UNLINK, K_MKDIR, K_FCHMOD,
  K_FCHOWN, K_UTIMENS, K_GETDENTS, K_CLOSE, K_SYMLINK, K_STAT, K_READLINK, K_COUNT
};
static const char *const kinds[K_COUNT] = {
  "open", "read", "write", "sync", "rename", "link", "unlink", "mkdir", "fchmod",
  "fchown", "utimens", "getdents", "close", "symlink", "stat", "readlink",
};
static const struct { const char *name; int code; } errnos[] = {
  {"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EACCES", EACCES},
  {"EPERM", EPERM}, {"EINTR", EINTR}, {"ENOMEM", ENOMEM}, {"EROFS", EROFS},
};

// The shared record: counts[K_COUNT], then the failed call's number, then its errno.
static uint64_t fallback[K_COUNT + 2];
static uint64_t *record = fallback;
static int fail_kind = -1;
static uint64_t fail_at;
static int fail_errno = EIO;
static int kill_instead;  // SQUEEZE_FAULT_KILL: SIGKILL in place of the chosen call
static const char *fail_path;
static uint64_t path_matches;  // calls of the failing kind on a path with `fail_path`
static int log_fd = -1;        // SQUEEZE_FAULT_LOG, opened for appending; -1 when unset

static long (*real_syscall_pointer)(long, ...);

// glibc's syscall(2), looked up on first use (another library's constructor may make a call
// before this one's runs).
static long (*real_syscall(void))(long, ...) {
  if (!real_syscall_pointer)
    real_syscall_pointer = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  return real_syscall_pointer;
}

__attribute__((constructor)) static void setup(void) {
  const char *path = getenv("SQUEEZE_FAULT_COUNTS");
  if (path && *path) {
    // Raw system calls: the shim's own file is never counted or failed.
    int fd = (int)real_syscall()(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
                               0644);
    if (fd >= 0) {
      size_t size = sizeof fallback;
      if (real_syscall()(SYS_ftruncate, fd, (long)size) == 0) {
        void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) record = map;
      }
      real_syscall()(SYS_close, fd);
    }
  }
  const char *log = getenv("SQUEEZE_FAULT_LOG");
  if (log && *log)
    log_fd = (int)real_syscall()(SYS_openat, AT_FDCWD, log,
                                 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const char *kind = getenv("SQUEEZE_FAULT_KIND");
  const char *at = getenv("SQUEEZE_FAULT_AT");
  const char *code = getenv("SQUEEZE_FAULT_ERRNO");
  if (kind && at) {
    for (int i = 0; i < K_COUNT; i++)
      if (strcmp(kind, kinds[i]) == 0) fail_kind = i;
    fail_at = strtoull(at, NULL, 10);
    fail_path = getenv("SQUEEZE_FAULT_PATH");
    if (fail_path && !*fail_path) fail_path = NULL;
    const char *kill_text = getenv("SQUEEZE_FAULT_KILL");
    kill_instead = kill_text && *kill_text;
  }
  if (code) {
    char *end;
    long number = strtol(code, &end, 10);
    if (*code && *end == 0) fail_errno = (int)number;
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
      if (strcmp(code, errnos[i].name) == 0) fail_errno = errnos[i].code;
  }
}

// Writes the failed call's description to SQUEEZE_FAULT_REPORT (raw calls: not counted).
static void describe(enum kind kind, uint64_t number, const char *path, int fd) {
  const char *report = getenv("SQUEEZE_FAULT_REPORT");
  if (!report || !*report) return;
  char target[4096] = "";
  if (!path && fd >= 0) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long length = real_syscall()(SYS_readlink, link, target, sizeof target - 1);
    target[length > 0 ? length : 0] = 0;
    path = target;
  }
  char line[4300];
  int length = snprintf(line, sizeof line, "%s %llu %d %s\n", kinds[kind],
                        (unsigned long long)number, fail_errno, path ? path : "");
  int out = (int)real_syscall()(SYS_openat, AT_FDCWD, report,
                                O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return;
  real_syscall()(SYS_write, out, line, length > 0 && length < (int)sizeof line ? length : 0);
  real_syscall()(SYS_close, out);
}

// Appends "kind<TAB>path" to the log, by raw calls (never counted). One write with
// O_APPEND: lines of threads writing at once are never mixed.
static void log_call(enum kind kind, const char *path, int fd) {
  char target[4096] = "";
  if (!path) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long length = real_syscall()(SYS_readlink, link, target, sizeof target - 1);
    target[length > 0 ? length : 0] = 0;
    path = target;
  }
  char line[4200];
  int length = snprintf(line, sizeof line, "%s\t%s\n", kinds[kind], path);
  if (length > 0 && length < (int)sizeof line) real_syscall()(SYS_write, log_fd, line, length);
}

// Counts one call of `kind` on `path` (or, when null, the descriptor `fd`); true when this
// is the call to fail.
static int counted(enum kind kind, const char *path, int fd) {
  uint64_t number = __atomic_add_fetch(&record[kind], 1, __ATOMIC_SEQ_CST);
  if (log_fd >= 0) log_call(kind, path, fd);
  if ((int)kind != fail_kind) return 0;
  if (fail_path) {
    char target[4096] = "";
    if (!path) {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      long length = real_syscall()(SYS_readlink, link, target, sizeof target - 1);
      target[length > 0 ? length : 0] = 0;
    }
    if (!strstr(path ? path : target, fail_path)) return 0;
    number = __atomic_add_fetch(&path_matches, 1, __ATOMIC_SEQ_CST);
  }
  if (number != fail_at) return 0;
  record[K_COUNT] = number;
  record[K_COUNT + 1] = (uint64_t)fail_errno;
  describe(kind, number, path, fd);
  if (kill_instead) real_syscall()(SYS_kill, (long)real_syscall()(SYS_getpid), (long)SIGKILL);
  return 1;
}

static int is_system_path(const char *path) {
  if (!path || path[0] != '/') return 0;
  return strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0 ||
         strncmp(path, "/dev/", 5) == 0 || strcmp(path, "/proc") == 0 ||
         strcmp(path, "/dev") == 0;
}

// True when `fd` is a file, folder or link with a path (its /proc/self/fd entry names one)
// outside the kernel's own file systems: pipes, sockets, eventfds and terminals are not
// (Dispatch's and the standard descriptors), nor /proc, /sys and /dev (the runtime reads
// /proc/self/maps, squeeze its cgroup's CPU quota). Read by a raw readlink, which is not
// counted, and is no call on the tree: strace's view of the tree (the sweep's --coverage)
// holds squeeze's calls only.
static int is_file_descriptor(int fd) {
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  long length = real_syscall()(SYS_readlink, link, target, sizeof target - 1);
  if (length <= 0) return 0;
  target[length] = 0;
  return target[0] == '/' && !is_system_path(target) && strncmp(target, "/memfd:", 7) != 0;
}

static int fails_path(enum kind kind, const char *path) {
  return !is_system_path(path) && counted(kind, path, -1);
}

static int fails_descriptor(enum kind kind, int fd) {
  return is_file_descriptor(fd) && counted(kind, NULL, fd);
}

// The next definition of `name` (glibc's), looked up once.
#define REAL(name)                                                   \
  ({                                                                 \
    static __typeof__(&name) next;                                   \
    if (!next) next = (__typeof__(&name))dlsym(RTLD_NEXT, #name);    \
    next;                                                            \
  })
#define FAIL(result) \
  do {               \
    errno = fail_errno; \
    return result;   \
  } while (0)

// Whether open's flags carry a mode argument.
static int takes_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

int open(const char *path, int flags, ...) {
  mode_t mode = 0;
  if (takes_mode(flags)) {
    va_list list;
    va_start(list, flags);
    mode = va_arg(list, mode_t);
    va_end(list);
  }
  if (fails_path(K_OPEN, path)) FAIL(-1);
  return REAL(open)(path, flags, mode);
}

int creat(const char *path, mode_t mode) {
  if (fails_path(K_OPEN, path)) FAIL(-1);
  return REAL(creat)(path, mode);
}

int open64(const char *path, int flags, ...) {
  mode_t mode = 0;
  if (takes_mode(flags)) {
    va_list list;
    va_start(list, flags);
    mode = va_arg(list, mode_t);
    va_end(list);
  }
  if (fails_path(K_OPEN, path)) FAIL(-1);
  return REAL(open64)(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (takes_mode(flags)) {
    va_list list;
    va_start(list, flags);
    mode = va_arg(list, mode_t);
    va_end(list);
  }
  if (fails_path(K_OPEN, path)) FAIL(-1);
  return REAL(openat)(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (takes_mode(flags)) {
    va_list list;
    va_start(list, flags);
    mode = va_arg(list, mode_t);
    va_end(list);
  }
  if (fails_path(K_OPEN, path)) FAIL(-1);
  return REAL(openat64)(dirfd, path, flags, mode);
}

ssize_t read(int fd, void *buffer, size_t count) {
  if (fails_descriptor(K_READ, fd)) FAIL(-1);
  return REAL(read)(fd, buffer, count);
}

// glibc exports pread and pread64 (and pwrite and pwrite64) as two names of one function;
// a program calls the one its headers chose (squeeze calls pread), so both are wrapped.
ssize_t pread(int fd, void *buffer, size_t count, off_t offset) {
  if (fails_descriptor(K_READ, fd)) FAIL(-1);
  return REAL(pread)(fd, buffer, count, offset);
}

ssize_t pread64(int fd, void *buffer, size_t count, off_t offset) {
  if (fails_descriptor(K_READ, fd)) FAIL(-1);
  return REAL(pread64)(fd, buffer, count, offset);
}

ssize_t readv(int fd, const struct iovec *vector, int count) {
  if (fails_descriptor(K_READ, fd)) FAIL(-1);
  return REAL(readv)(fd, vector, count);
}

ssize_t preadv(int fd, const struct iovec *vector, int count, off_t offset) {
  if (fails_descriptor(K_READ, fd)) FAIL(-1);
  return REAL(preadv)(fd, vector, count, offset);
}

ssize_t write(int fd, const void *buffer, size_t count) {
  if (fails_descriptor(K_WRITE, fd)) FAIL(-1);
  return REAL(write)(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
  if (fails_descriptor(K_WRITE, fd)) FAIL(-1);
  return REAL(pwrite)(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
  if (fails_descriptor(K_WRITE, fd)) FAIL(-1);
  return REAL(pwrite64)(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
  if (fails_descriptor(K_WRITE, fd)) FAIL(-1);
  return REAL(writev)(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
  if (fails_descriptor(K_WRITE, fd)) FAIL(-1);
  return REAL(pwritev)(fd, vector, count, offset);
}

int fsync(int fd) {
  if (fails_descriptor(K_SYNC, fd)) FAIL(-1);
  return REAL(fsync)(fd);
}

int fdatasync(int fd) {
  if (fails_descriptor(K_SYNC, fd)) FAIL(-1);
  return REAL(fdatasync)(fd);
}

int syncfs(int fd) {
  if (fails_descriptor(K_SYNC, fd)) FAIL(-1);
  return REAL(syncfs)(fd);
}

int rename(const char *from, const char *to) {
  if (fails_path(K_RENAME, to)) FAIL(-1);
  return REAL(rename)(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
  if (fails_path(K_RENAME, to)) FAIL(-1);
  return REAL(renameat)(fromfd, from, tofd, to);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
  if (fails_path(K_RENAME, to)) FAIL(-1);
  return REAL(renameat2)(fromfd, from, tofd, to, flags);
}

int link(const char *from, const char *to) {
  if (fails_path(K_LINK, to)) FAIL(-1);
  return REAL(link)(from, to);
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags) {
  if (fails_path(K_LINK, to)) FAIL(-1);
  return REAL(linkat)(fromfd, from, tofd, to, flags);
}

int symlink(const char *target, const char *path) {
  if (fails_path(K_SYMLINK, path)) FAIL(-1);
  return REAL(symlink)(target, path);
}

int symlinkat(const char *target, int dirfd, const char *path) {
  if (fails_path(K_SYMLINK, path)) FAIL(-1);
  return REAL(symlinkat)(target, dirfd, path);
}

int unlink(const char *path) {
  if (fails_path(K_UNLINK, path)) FAIL(-1);
  return REAL(unlink)(path);
}

int rmdir(const char *path) {
  if (fails_path(K_UNLINK, path)) FAIL(-1);
  return REAL(rmdir)(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
  if (fails_path(K_UNLINK, path)) FAIL(-1);
  return REAL(unlinkat)(dirfd, path, flags);
}

int mkdir(const char *path, mode_t mode) {
  if (fails_path(K_MKDIR, path)) FAIL(-1);
  return REAL(mkdir)(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
  if (fails_path(K_MKDIR, path)) FAIL(-1);
  return REAL(mkdirat)(dirfd, path, mode);
}

int fchmod(int fd, mode_t mode) {
  if (fails_descriptor(K_FCHMOD, fd)) FAIL(-1);
  return REAL(fchmod)(fd, mode);
}

int chmod(const char *path, mode_t mode) {
  if (fails_path(K_FCHMOD, path)) FAIL(-1);
  return REAL(chmod)(path, mode);
}

int fchmodat(int dirfd, const char *path, mode_t mode, int flags) {
  if (fails_path(K_FCHMOD, path)) FAIL(-1);
  return REAL(fchmodat)(dirfd, path, mode, flags);
}

int fchown(int fd, uid_t owner, gid_t group) {
  if (fails_descriptor(K_FCHOWN, fd)) FAIL(-1);
  return REAL(fchown)(fd, owner, group);
}

int fchownat(int dirfd, const char *path, uid_t owner, gid_t group, int flags) {
  if (fails_path(K_FCHOWN, path)) FAIL(-1);
  return REAL(fchownat)(dirfd, path, owner, group, flags);
}

int chown(const char *path, uid_t owner, gid_t group) {
  if (fails_path(K_FCHOWN, path)) FAIL(-1);
  return REAL(chown)(path, owner, group);
}

int lchown(const char *path, uid_t owner, gid_t group) {
  if (fails_path(K_FCHOWN, path)) FAIL(-1);
  return REAL(lchown)(path, owner, group);
}

int futimens(int fd, const struct timespec times[2]) {
  if (fails_descriptor(K_UTIMENS, fd)) FAIL(-1);
  return REAL(futimens)(fd, times);
}

// True for a null path (glibc declares utimensat's path nonnull, yet Linux takes a null one).
__attribute__((noinline)) static int absent(const char *path) { return path == NULL; }

int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags) {
  // A null path is futimens on dirfd.
  int fails = absent(path) ? fails_descriptor(K_UTIMENS, dirfd) : fails_path(K_UTIMENS, path);
  if (fails) FAIL(-1);
  return REAL(utimensat)(dirfd, path, times, flags);
}

int utimes(const char *path, const struct timeval times[2]) {
  if (fails_path(K_UTIMENS, path)) FAIL(-1);
  return REAL(utimes)(path, times);
}

ssize_t getdents64(int fd, void *buffer, size_t size) {
  if (fails_descriptor(K_GETDENTS, fd)) FAIL(-1);
  return REAL(getdents64)(fd, buffer, size);
}

int close(int fd) {
  int fails = fails_descriptor(K_CLOSE, fd);
  int result = REAL(close)(fd);
  if (fails) FAIL(-1);
  return result;
}

// stat, lstat, fstatat and statx, and their 64 names (glibc exports both). A path-less
// fstatat or statx (AT_EMPTY_PATH) is on the descriptor.
int stat(const char *path, struct stat *status) {
  if (fails_path(K_STAT, path)) FAIL(-1);
  return REAL(stat)(path, status);
}

int stat64(const char *path, struct stat64 *status) {
  if (fails_path(K_STAT, path)) FAIL(-1);
  return REAL(stat64)(path, status);
}

int lstat(const char *path, struct stat *status) {
  if (fails_path(K_STAT, path)) FAIL(-1);
  return REAL(lstat)(path, status);
}

int lstat64(const char *path, struct stat64 *status) {
  if (fails_path(K_STAT, path)) FAIL(-1);
  return REAL(lstat64)(path, status);
}

int fstat(int fd, struct stat *status) {
  if (fails_descriptor(K_STAT, fd)) FAIL(-1);
  return REAL(fstat)(fd, status);
}

int fstat64(int fd, struct stat64 *status) {
  if (fails_descriptor(K_STAT, fd)) FAIL(-1);
  return REAL(fstat64)(fd, status);
}

static int stat_fails(int dirfd, const char *path, int flags) {
  if ((flags & AT_EMPTY_PATH) && path && !*path) return fails_descriptor(K_STAT, dirfd);
  return fails_path(K_STAT, path);
}

int fstatat(int dirfd, const char *path, struct stat *status, int flags) {
  if (stat_fails(dirfd, path, flags)) FAIL(-1);
  return REAL(fstatat)(dirfd, path, status, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *status, int flags) {
  if (stat_fails(dirfd, path, flags)) FAIL(-1);
  return REAL(fstatat64)(dirfd, path, status, flags);
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *status) {
  if (stat_fails(dirfd, path, flags)) FAIL(-1);
  return REAL(statx)(dirfd, path, flags, mask, status);
}

ssize_t readlink(const char *path, char *buffer, size_t size) {
  if (fails_path(K_READLINK, path)) FAIL(-1);
  return REAL(readlink)(path, buffer, size);
}

ssize_t readlinkat(int dirfd, const char *path, char *buffer, size_t size) {
  if (fails_path(K_READLINK, path)) FAIL(-1);
  return REAL(readlinkat)(dirfd, path, buffer, size);
}

// squeeze reaches openat2, renameat2, syncfs and getdents64 through syscall(2).
long syscall(long number, ...) {
  va_list list;
  va_start(list, number);
  long a = va_arg(list, long), b = va_arg(list, long), c = va_arg(list, long);
  long d = va_arg(list, long), e = va_arg(list, long), f = va_arg(list, long);
  va_end(list);
  int fails = 0;
  switch (number) {
    case SYS_openat2: fails = fails_path(K_OPEN, (const char *)b); break;
    case SYS_openat: fails = fails_path(K_OPEN, (const char *)b); break;
    case SYS_renameat2: fails = fails_path(K_RENAME, (const char *)d); break;
    case SYS_renameat: fails = fails_path(K_RENAME, (const char *)d); break;
    case SYS_syncfs:
    case SYS_fsync:
    case SYS_fdatasync: fails = fails_descriptor(K_SYNC, (int)a); break;
    case SYS_getdents64: fails = fails_descriptor(K_GETDENTS, (int)a); break;
    case SYS_linkat: fails = fails_path(K_LINK, (const char *)d); break;
    case SYS_unlinkat: fails = fails_path(K_UNLINK, (const char *)b); break;
    case SYS_mkdirat: fails = fails_path(K_MKDIR, (const char *)b); break;
    case SYS_symlinkat: fails = fails_path(K_SYMLINK, (const char *)c); break;
    case SYS_newfstatat:
    case SYS_statx: fails = stat_fails((int)a, (const char *)b, (int)(number == SYS_statx ? c : d)); break;
    case SYS_readlinkat: fails = fails_path(K_READLINK, (const char *)b); break;
    default: break;
  }
  if (fails) FAIL(-1);
  return real_syscall()(number, a, b, c, d, e, f);
}
