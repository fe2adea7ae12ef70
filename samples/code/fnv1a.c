/* FNV-1a, 64 bits: the stable hash squeeze's --shard uses (spec section 7). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t fnv1a64(const unsigned char *bytes, size_t length) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        uint64_t hash = fnv1a64((const unsigned char *)argv[i], strlen(argv[i]));
        printf("%016llx  %s\n", (unsigned long long)hash, argv[i]);
    }
    return 0;
}
