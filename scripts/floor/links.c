// The floor of a snapshot night's own work: what making the new snapshot's folders and hard
// links costs with nothing else, so scripts/bench-snapshots can show how much of a night
// beyond a re-run and the changed files' compression is the links themselves.
//
//   links EARLIER NEW THREADS < LIST   (LIST: "d PATH" and "f PATH" lines below EARLIER,
//                                       folders before their contents, as two `find -printf`)
//
// Makes NEW, then each folder of LIST in it (mkdirat, mode 0755, one thread, parents first),
// then hard-links every file of LIST from EARLIER to the same path in NEW (linkat) on
// THREADS threads, each taking a contiguous range of the list and holding the two folders
// open (O_PATH) while its files stay in one, and checking each new name with fstatat (as
// squeeze checks that the link is the output it planned); last, deepest first, gives each
// folder its times (utimensat), as a mirror's folders get their sources'. What it leaves out
// is what makes it a floor: no walk of the source, no look at the earlier outputs (a re-run
// does that too), no manifest, no sync, no error recovery (it stops at the first error).
//
// Not part of squeeze: a measuring aid, built by scripts/bench-snapshots with the system's cc.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char **files;
static size_t fileCount;
static int earlierFolder, newFolder;

struct range {
  size_t from, to;
};

static void fail(const char *what, const char *path) {
  perror(path);
  fprintf(stderr, "links: %s failed\n", what);
  exit(1);
}

// Links the files of one range, reopening the two folders only when the folder changes.
static void *linkRange(void *argument) {
  const struct range *range = argument;
  char held[4096] = "";
  int heldLength = -1, from = -1, to = -1;
  for (size_t index = range->from; index < range->to; index++) {
    const char *path = files[index];
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int length = slash ? (int)(slash - path) : 0;
    if (length != heldLength || strncmp(held, path, (size_t)length) != 0) {
      if (from >= 0) {
        close(from);
        close(to);
      }
      memcpy(held, path, (size_t)length);
      held[length] = 0;
      heldLength = length;
      from = openat(earlierFolder, length ? held : ".", O_PATH | O_DIRECTORY | O_NOFOLLOW);
      to = openat(newFolder, length ? held : ".", O_PATH | O_DIRECTORY | O_NOFOLLOW);
      if (from < 0 || to < 0) fail("openat", held);
    }
    struct stat status;
    if (linkat(from, name, to, name, 0) != 0) fail("linkat", path);
    if (fstatat(to, name, &status, AT_SYMLINK_NOFOLLOW) != 0) fail("fstatat", path);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: links EARLIER NEW THREADS < LIST\n");
    return 2;
  }
  int threads = atoi(argv[3]);
  if (threads < 1 || threads > 64) threads = 1;
  earlierFolder = open(argv[1], O_PATH | O_DIRECTORY);
  if (earlierFolder < 0) fail("open", argv[1]);
  if (mkdir(argv[2], 0755) != 0) fail("mkdir", argv[2]);
  newFolder = open(argv[2], O_PATH | O_DIRECTORY);
  if (newFolder < 0) fail("open", argv[2]);
  char **folders = NULL;
  size_t folderCount = 0, folderCapacity = 0, fileCapacity = 0;
  char line[4200];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (strlen(line) < 3) continue;
    if (line[0] == 'd') {
      if (folderCount == folderCapacity) {
        folderCapacity = folderCapacity ? 2 * folderCapacity : 1024;
        folders = realloc(folders, folderCapacity * sizeof *folders);
      }
      folders[folderCount++] = strdup(line + 2);
      if (mkdirat(newFolder, line + 2, 0755) != 0) fail("mkdirat", line + 2);
    } else {
      if (fileCount == fileCapacity) {
        fileCapacity = fileCapacity ? 2 * fileCapacity : 65536;
        files = realloc(files, fileCapacity * sizeof *files);
      }
      files[fileCount++] = strdup(line + 2);
    }
  }
  pthread_t workers[64];
  struct range ranges[64];
  for (int index = 0; index < threads; index++) {
    ranges[index].from = fileCount * (size_t)index / (size_t)threads;
    ranges[index].to = fileCount * (size_t)(index + 1) / (size_t)threads;
    pthread_create(&workers[index], NULL, linkRange, &ranges[index]);
  }
  for (int index = 0; index < threads; index++) pthread_join(workers[index], NULL);
  const struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};
  for (size_t index = folderCount; index-- > 0;) {
    if (utimensat(newFolder, folders[index], times, AT_SYMLINK_NOFOLLOW) != 0) {
      fail("utimensat", folders[index]);
    }
  }
  printf("%zu folders, %zu links\n", folderCount, fileCount);
  return 0;
}
