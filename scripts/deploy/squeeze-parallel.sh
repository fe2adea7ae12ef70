#!/bin/sh
# Four shards of /data with GNU parallel (Debian's `parallel`), one squeeze per shard, all
# writing into the one mirror /backup/data. On one host this only splits the work squeeze
# already spreads over every core; the point is ssh: add `-S host1,host2,host3,host4`
# (each host needs squeeze on its PATH and the same /data and /backup/data, e.g. over NFS)
# and each host compresses its quarter. parallel exits with the number of shards that
# failed (0: every shard done). Re-runs are cheap: up-to-date outputs are left alone.
parallel squeeze --shard {}/4 -o /backup/data /data/ ::: 1 2 3 4
