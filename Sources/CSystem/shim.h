// CSystem: Linux calls that glibc's Swift module does not export (it is built without
// _GNU_SOURCE, and Swift cannot call variadic C functions such as syscall and ioctl).
// Each wrapper is a direct system call; errors come back as -1 with errno set.
#pragma once
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/// fstatfs(2)'s file system type (f_type, a magic number from linux/magic.h) of fd's file
/// system, or -1 with errno.
static inline long long squeeze_file_system_type(int fd) {
  struct statfs buffer;
  if (fstatfs(fd, &buffer) != 0) return -1;
  return (long long)buffer.f_type;
}

/// syncfs(2): commit the file system containing fd to disk.
static inline int squeeze_syncfs(int fd) { return (int)syscall(SYS_syncfs, fd); }

/// getdents64(2): reads directory entries of fd into buf (struct linux_dirent64 records:
/// d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name NUL-terminated).
static inline long squeeze_getdents64(int fd, void *buf, unsigned long size) {
  return syscall(SYS_getdents64, fd, buf, size);
}

/// gettid(2): the calling thread's id (for diagnostics).
static inline int squeeze_gettid(void) { return (int)syscall(SYS_gettid); }

/// The calling thread's id (gettid(2)), asked of the kernel once per thread and then kept in
/// a thread-local variable: the task-state log records it on every running span, where a
/// system call each time would cost ~100 ns (a thread-local read costs ~1 ns).
static inline int squeeze_thread_id(void) {
  static _Thread_local int cached;
  if (cached == 0) cached = (int)syscall(SYS_gettid);
  return cached;
}

/// pthread_setname_np(3) (declared by <pthread.h> only under _GNU_SOURCE, which glibc's
/// Swift module is built without): names a thread in /proc/self/task/TID/comm, in ps, top,
/// gdb and perf. Linux keeps at most 15 bytes; a longer name is refused with ERANGE.
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (at most 15 bytes); returns 0 or an errno value.
static inline int squeeze_set_thread_name(const char *name) {
  return pthread_setname_np(pthread_self(), name);
}

/// Dispatch's own answers about the queue a work item runs on (libdispatch, which the Swift
/// runtime and Foundation link): declared here with plain pointers, since glibc's Swift
/// module cannot see <dispatch/dispatch.h>. `dispatch_get_current_queue` is meant for
/// debugging, which is what squeeze uses it for: naming a thread by the queue it serves.
extern void *dispatch_get_current_queue(void);
extern const char *dispatch_queue_get_label(void *queue);
extern unsigned int dispatch_queue_get_qos_class(void *queue, int *relative_priority);

/// The queue whose work item runs on the calling thread, when it is not the one this
/// function returned on this thread for the same `generation` (one per task-state log);
/// NULL when unchanged. A thread-local comparison, so asking at every job costs ~1 ns.
static inline void *squeeze_dispatch_queue_if_new(unsigned long generation) {
  static _Thread_local void *last;
  static _Thread_local unsigned long last_generation;
  void *queue = dispatch_get_current_queue();
  if (queue == last && generation == last_generation) return 0;
  last = queue;
  last_generation = generation;
  return queue;
}

/// The label of `queue` (`dispatch_queue_get_label`), never NULL.
static inline const char *squeeze_dispatch_queue_label(void *queue) {
  const char *label = dispatch_queue_get_label(queue);
  return label ? label : "";
}

/// The QoS class of `queue` (`QOS_CLASS_USER_INITIATED` 0x19, `QOS_CLASS_DEFAULT` 0x15, …;
/// 0 when unspecified, as the main queue's is).
static inline unsigned int squeeze_dispatch_queue_qos(void *queue) {
  int relative = 0;
  return dispatch_queue_get_qos_class(queue, &relative);
}

/// openat2(2) (Linux 5.6): open with RESOLVE_* restrictions on path resolution.
static inline int squeeze_openat2(int dirfd, const char *path, unsigned long long flags,
                                  unsigned long long mode, unsigned long long resolve) {
  struct open_how how = {.flags = flags, .mode = mode, .resolve = resolve};
  return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

/// renameat2(2): rename with RENAME_NOREPLACE and friends.
static inline int squeeze_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                                    const char *newpath, unsigned int flags) {
  return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

/// sched_getaffinity(2) for the calling thread, as the raw system call: fills `mask` (`size`
/// bytes, a multiple of 8) with the CPUs it may run on and returns the number of bytes the
/// kernel wrote, or -1 with errno (EINVAL when `size` is smaller than the kernel's mask).
static inline long squeeze_sched_getaffinity(void *mask, unsigned long size) {
  return syscall(SYS_sched_getaffinity, 0, size, mask);
}

/// clock_gettime(CLOCK_REALTIME_COARSE): the clock the kernel stamps file times with
/// (current_time()), so a file changed after this call never has an earlier ctime.
static inline struct timespec squeeze_coarse_realtime(void) {
  struct timespec now = {0, 0};
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

/// The width of the terminal on fd in columns, or 0 when fd is not a terminal.
static inline int squeeze_terminal_columns(int fd) {
  struct winsize size;
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

/// name_to_handle_at(2) on the file open as `fd` itself (AT_EMPTY_PATH; an O_PATH
/// descriptor opened with O_NOFOLLOW on a symbolic link names the link): the file system's
/// handle for the file, which holds its inode number and the inode's generation (a new one
/// each time the number is reused). Writes the handle's type to `type` and its bytes to
/// `bytes` (room for `capacity`; the kernel's MAX_HANDLE_SZ is 128) and returns their count,
/// or -1 with errno: EOPNOTSUPP when the file system gives no handles, EOVERFLOW when
/// `capacity` is too small.
static inline int squeeze_file_handle(int fd, int *type, unsigned char *bytes,
                                      unsigned int capacity) {
  struct {
    unsigned int handle_bytes;
    int handle_type;
    unsigned char f_handle[128];
  } handle;
  int mount_id = 0;
  handle.handle_bytes = capacity < 128 ? capacity : 128;
  // AT_EMPTY_PATH is 0x1000 (glibc shows the name only with _GNU_SOURCE).
  if (syscall(SYS_name_to_handle_at, fd, "", &handle, &mount_id, 0x1000) != 0) return -1;
  *type = handle.handle_type;
  memcpy(bytes, handle.f_handle, handle.handle_bytes);
  return (int)handle.handle_bytes;
}

static const unsigned int SQUEEZE_RENAME_NOREPLACE = RENAME_NOREPLACE;
static const unsigned int SQUEEZE_RENAME_EXCHANGE = RENAME_EXCHANGE;
static const unsigned long long SQUEEZE_RESOLVE_NO_SYMLINKS = RESOLVE_NO_SYMLINKS;
/// O_PATH (a descriptor that only names a folder, for *at calls): glibc shows it only with
/// _GNU_SOURCE, so its value comes from the kernel's asm-generic/fcntl.h otherwise.
#ifdef O_PATH
static const int SQUEEZE_O_PATH = O_PATH;
#else
static const int SQUEEZE_O_PATH = 010000000;
#endif
/// O_TMPFILE (an unnamed file in a folder, linked under a name when whole) and
/// AT_EMPTY_PATH (linkat(2) of the file open as the descriptor itself): glibc shows them only
/// with _GNU_SOURCE, so their values come from the kernel's asm-generic/fcntl.h and
/// linux/fcntl.h otherwise.
#ifdef O_TMPFILE
static const int SQUEEZE_O_TMPFILE = O_TMPFILE;
#else
static const int SQUEEZE_O_TMPFILE = 020000000 | 0200000;
#endif
#ifdef AT_EMPTY_PATH
static const int SQUEEZE_AT_EMPTY_PATH = AT_EMPTY_PATH;
#else
static const int SQUEEZE_AT_EMPTY_PATH = 0x1000;
#endif
static const unsigned long long SQUEEZE_RESOLVE_BENEATH = RESOLVE_BENEATH;
static const unsigned long long SQUEEZE_RESOLVE_NO_MAGICLINKS = RESOLVE_NO_MAGICLINKS;

/// fgetxattr(2): the size of extended attribute `name` of fd (its value is not read), or -1
/// with errno ENODATA when it is absent.
static inline long squeeze_fgetxattr_size(int fd, const char *name) {
  return (long)fgetxattr(fd, name, 0, 0);
}

// Whether signal `number`'s disposition is "ignore" (SIG_IGN), as a shell leaves SIGINT for
// a background job and nohup leaves SIGHUP. Swift cannot compare SIG_IGN's function pointer.
static inline int squeeze_signal_is_ignored(int number) {
  struct sigaction action;
  return sigaction(number, NULL, &action) == 0 && action.sa_handler == SIG_IGN;
}
