// The floor: the least work a safe folder compressor must do per file, with nothing else,
// so scripts/bench-floor can show how close squeeze comes to it on the same data.
//
//   floor FOLDER THREADS [LEVEL] < LIST   (LIST: paths below FOLDER, one a line, as
//                                          `find -printf %P`; LEVEL 1 to 12, default 6)
//
// Per file, on THREADS threads that take files in turn from one counter: openat2 the
// source (no symbolic links), fstat, read it whole, compress it into one gzip member
// (RFC 1952: FNAME, MTIME, CRC-32, ISIZE) with the library and library level squeeze's
// fast engine picks for LEVEL and the file's length, so the outputs are alike: ISA-L's
// level 1 for files of at least 1 KiB at level 1, ISA-L's level 3 for files of at least
// 2 KiB at level 2 where ISA-L runs its AVX-512 code, libdeflate otherwise: its level 1 at
// level 3 (and at level 2 without AVX-512), the level itself elsewhere, except level 8 for
// files of at most 4 KiB at levels 6 and 7 (squeeze's rule for small inputs). Create an
// unnamed file in the output's folder (O_TMPFILE, with the source's permission bits), write,
// futimens, and link it under its final name with linkat(AT_EMPTY_PATH), which never
// replaces an existing name: squeeze's guarantee that no partial output ever sits under a
// final name, at squeeze's cost. Where the file system has no unnamed files, a named
// temporary beside the output (O_CREAT|O_EXCL) renamed into place with
// renameat2(RENAME_NOREPLACE), as squeeze falls back. What it leaves out is
// what makes it a floor: no folder walk (the list comes on standard input, untimed by the
// caller's choice), no sync, no progress, no re-run checks, no task bookkeeping, no
// ownership (squeeze changes it only when the source's owner is not the process's), and no
// error recovery beyond removing its temporaries and stopping at the first error.
//
// A floor for folders of text files (the corpus's tree/ and tiny/): it compresses every
// file as one piece on one thread and never stores, so for one big file or already
// compressed data squeeze can be faster than it.
//
// ISA-L is called once per file on a reset stream with its default level buffer, as igzip
// does; squeeze's extra first call at ISA-L levels 1 and 2 (which keeps ISA-L's output
// independent of where its stream sits in memory) is left out: it costs nothing measurable.
//
// Not part of squeeze: a measuring aid, built by scripts/bench-floor against Debian's
// static libdeflate (libdeflate-dev) and ISA-L (libisal-dev), as squeeze links them.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include "../../Sources/CIsal/shim.h"
#include <libdeflate.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { max_threads = 256, path_room = 4096 };

static char **paths;
static size_t path_count;
static int folder;
static atomic_size_t next_file;
/// The squeeze level (1 to 12).
static int level = 6;
/// Each thread's temporary while it exists (an empty string otherwise), removed on failure.
static char temporaries[max_threads][path_room];
static pthread_mutex_t failing = PTHREAD_MUTEX_INITIALIZER;

/// Reports `what` about `path` (with errno's text when `code` is not 0), removes every
/// thread's temporary, and exits with status 1. The first failing thread does this; the
/// others wait for the exit.
static void fail_with(const char *what, const char *path, int code) {
  pthread_mutex_lock(&failing);
  if (code)
    fprintf(stderr, "floor: %s: %s: %s\n", path, what, strerror(code));
  else
    fprintf(stderr, "floor: %s: %s\n", path, what);
  for (int i = 0; i < max_threads; i++)
    if (temporaries[i][0]) unlinkat(folder, temporaries[i], 0);
  exit(1);
}

static void fail(const char *what, const char *path) { fail_with(what, path, errno); }

static int open_beneath(const char *path, uint64_t flags, uint64_t mode) {
  struct open_how how = {.flags = flags | O_CLOEXEC, .mode = mode, .resolve = RESOLVE_NO_SYMLINKS};
  return (int)syscall(SYS_openat2, folder, path, &how, sizeof how);
}

static void put_le32(unsigned char *at, uint32_t value) {
  for (int i = 0; i < 4; i++) at[i] = (unsigned char)(value >> (8 * i));
}

static void write_all(int fd, const unsigned char *bytes, size_t count, const char *path) {
  while (count > 0) {
    ssize_t written = write(fd, bytes, count);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail("cannot write", path);
    bytes += written;
    count -= (size_t)written;
  }
}

static void *work(void *argument) {
  char *temporary = temporaries[(intptr_t)argument];
  // squeeze's fast engine map: ISA-L from isal_minimum bytes on (none when 0), libdeflate
  // below, at level 8 up to 4 KiB at levels 6 and 7.
  // At level 2 ISA-L's level 3 only where it runs its AVX-512 code; libdeflate's level 1
  // serves level 3, and level 2 elsewhere.
  int isal_at_2 = level == 2 && squeeze_isal_uses_avx512();
  int isal_level = level == 1 ? 1 : isal_at_2 ? 3 : -1;
  size_t isal_minimum = level == 1 ? 1024 : isal_at_2 ? 2048 : SIZE_MAX;
  int library_level = level == 3 || (level == 2 && !isal_at_2) ? 1 : level;
  struct libdeflate_compressor *normal = libdeflate_alloc_compressor(library_level);
  struct libdeflate_compressor *small =
      libdeflate_alloc_compressor(level == 6 || level == 7 ? 8 : library_level);
  if (!normal || !small) fail_with("cannot allocate compressors", "libdeflate", 0);
  struct isal_zstream stream;
  uint32_t level_buffer_size = isal_level == 1 ? ISAL_DEF_LVL1_DEFAULT : ISAL_DEF_LVL3_DEFAULT;
  unsigned char *level_buffer = isal_level < 0 ? NULL : malloc(level_buffer_size);
  if (isal_level >= 0 && !level_buffer) fail_with("cannot allocate a level buffer", "ISA-L", 0);
  isal_deflate_init(&stream);
  size_t capacity = 0;
  unsigned char *input = NULL, *output = NULL;
  size_t output_capacity = 0;
  char final[path_room], name_of_temporary[path_room];
  // Whether this file system takes unnamed files (O_TMPFILE); cleared at the first refusal.
  int unnamed = 1;
  for (;;) {
    size_t index = atomic_fetch_add_explicit(&next_file, 1, memory_order_relaxed);
    if (index >= path_count) break;
    const char *path = paths[index];
    int source = open_beneath(path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
    if (source < 0) fail("cannot open", path);
    struct stat status;
    if (fstat(source, &status) != 0) fail("cannot stat", path);
    size_t size = (size_t)status.st_size;
    if (size + 1 > capacity) {
      capacity = size + 1;
      input = realloc(input, capacity);
      if (!input) fail("out of memory", path);
    }
    size_t have = 0;
    for (;;) {
      ssize_t got = read(source, input + have, capacity - have);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("cannot read", path);
      if (got == 0) break;
      have += (size_t)got;
      if (have == capacity) break;  // it grew meanwhile: the floor takes what fits
    }
    close(source);

    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int folder_length = slash ? (int)(slash - path) + 1 : 0;
    struct libdeflate_compressor *compressor = have <= 4096 ? small : normal;
    int by_isal = have >= isal_minimum;
    size_t header = 10 + strlen(name) + 1;
    // ISA-L's stored fallback bound: the input plus 5 bytes per 64 KiB stored block and slack.
    size_t bound = by_isal ? have + (have >> 12) + 1024
                           : libdeflate_deflate_compress_bound(compressor, have);
    size_t needed = header + bound + 8;
    if (needed > output_capacity) {
      output_capacity = needed;
      output = realloc(output, output_capacity);
      if (!output) fail("out of memory", path);
    }
    // RFC 1952 section 2.3: ID1 ID2 CM FLG (FNAME), MTIME, XFL, OS (3: Unix), the name.
    unsigned char *at = output;
    at[0] = 0x1f, at[1] = 0x8b, at[2] = 8, at[3] = 8;
    // MTIME 0 when the time does not fit 32 bits unsigned (RFC 1952: no time stamp).
    time_t seconds = status.st_mtim.tv_sec;
    put_le32(at + 4, seconds >= 0 && seconds <= (time_t)UINT32_MAX ? (uint32_t)seconds : 0);
    at[8] = 0, at[9] = 3;
    memcpy(at + 10, name, strlen(name) + 1);
    size_t deflated;
    if (by_isal) {
      isal_deflate_reset(&stream);
      stream.level = (uint32_t)isal_level;
      stream.level_buf = level_buffer;
      stream.level_buf_size = level_buffer_size;
      stream.gzip_flag = IGZIP_DEFLATE;
      stream.end_of_stream = 1;
      stream.flush = NO_FLUSH;
      stream.next_in = input;
      stream.avail_in = (uint32_t)have;
      stream.next_out = output + header;
      stream.avail_out = (uint32_t)(output_capacity - header - 8);
      if (isal_deflate(&stream) != COMP_OK || stream.internal_state.state != ZSTATE_END)
        fail_with("compressed data did not fit (ISA-L)", path, 0);
      deflated = stream.total_out;
    } else {
      deflated = libdeflate_deflate_compress(
          compressor, input, have, output + header, output_capacity - header - 8);
    }
    if (deflated == 0) fail_with("compressed data did not fit", path, 0);
    put_le32(output + header + deflated, libdeflate_crc32(0, input, have));
    put_le32(output + header + deflated + 4, (uint32_t)have);

    if (snprintf(final, sizeof final, "%s.gz", path) >= (int)sizeof final)
      fail_with("path too long", path, 0);
    // An unnamed file in the output's folder, linked under its name once whole (squeeze's
    // way where the file system has them); a named temporary renamed into place otherwise.
    int named = snprintf(name_of_temporary, sizeof name_of_temporary, "%.*s",
                         folder_length ? folder_length - 1 : 1, folder_length ? path : ".");
    if (named < 0 || named >= (int)sizeof name_of_temporary) fail_with("path too long", path, 0);
    int target = unnamed ? open_beneath(name_of_temporary, O_WRONLY | O_TMPFILE | O_NOCTTY,
                                        status.st_mode & 0777)
                         : -1;
    if (target < 0 && unnamed && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
      fail("cannot create an unnamed file in", name_of_temporary);
    if (target < 0) {
      unnamed = 0;
      named = snprintf(name_of_temporary, sizeof name_of_temporary, "%.*s.floor-%zu.tmp",
                       folder_length, path, index);
      if (named < 0 || named >= (int)sizeof name_of_temporary)
        fail_with("path too long", path, 0);
      target = open_beneath(
          name_of_temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY, status.st_mode & 0777);
      if (target < 0) fail("cannot create", name_of_temporary);
      memcpy(temporary, name_of_temporary, (size_t)named + 1);
    }
    write_all(target, output, header + deflated + 8, final);
    struct timespec times[2] = {status.st_atim, status.st_mtim};
    if (futimens(target, times) != 0) fail("cannot set the times of", final);
    if (unnamed) {
      if (linkat(target, "", folder, final, AT_EMPTY_PATH) != 0) fail("cannot link into place", final);
      if (close(target) != 0) fail("cannot close", final);
    } else {
      if (close(target) != 0) fail("cannot close", temporary);
      if (syscall(SYS_renameat2, folder, temporary, folder, final, RENAME_NOREPLACE) != 0)
        fail("cannot rename into place", final);
      temporary[0] = 0;
    }
  }
  free(input);
  free(output);
  libdeflate_free_compressor(normal);
  libdeflate_free_compressor(small);
  free(level_buffer);
  return NULL;
}

int main(int argc, char **argv) {
  char *end = NULL;
  long count = argc == 3 || argc == 4 ? strtol(argv[2], &end, 10) : 0;
  int usable = count >= 1 && count <= max_threads && *end == 0;
  if (usable && argc == 4) {
    long chosen = strtol(argv[3], &end, 10);
    usable = *end == 0 && chosen >= 1 && chosen <= 12;
    level = (int)chosen;
  }
  if (!usable) {
    fprintf(stderr, "usage: floor FOLDER THREADS [LEVEL] < LIST   (THREADS: 1 to %d, LEVEL: 1 to 12)\n",
            max_threads);
    return 64;
  }
  folder = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder < 0) fail("cannot open folder", argv[1]);
  size_t capacity = 1024;
  paths = malloc(capacity * sizeof *paths);
  char *line = NULL;
  size_t line_capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &line_capacity, stdin)) > 0) {
    if (line[length - 1] == '\n') line[--length] = 0;
    if (length == 0) continue;
    if (path_count == capacity) paths = realloc(paths, (capacity *= 2) * sizeof *paths);
    if (!paths || !(paths[path_count++] = strdup(line))) fail("out of memory", "the list");
  }
  free(line);
  pthread_t threads[max_threads];
  for (long i = 0; i < count; i++) {
    int code = pthread_create(&threads[i], NULL, work, (void *)(intptr_t)i);
    if (code) fail_with("cannot start a thread", "floor", code);
  }
  for (long i = 0; i < count; i++) pthread_join(threads[i], NULL);
  return 0;
}
