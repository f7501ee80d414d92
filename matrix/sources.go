package matrix

// Sources cited by the rows of the literature table.
const (
	SrcRedis     = "Redis docs, \"Distributed Locks with Redis\" (redis.io/docs/latest/develop/use/patterns/distributed-locks/)"
	SrcKleppmann = "M. Kleppmann, \"How to do distributed locking\", 2016"
	SrcAntirez   = "antirez, \"Is Redlock safe?\", 2016"
	SrcMutant    = "deliberate bug (locks/mutants.go)"
	SrcExtends   = "lock libraries' extend bugs: go-redsync/redsync issues 72, 147 and 149, mike-marcacci/node-redlock issues 296 and 169, leandromoreira/redlock-rb issue 36 (extends after expiry, extends that revive another client's key)"
	SrcJepsen    = "Jepsen's fenced-mutex check: fencing tokens must increase in the order the lock was granted"
	SrcRedisPy   = "redis-py docs, Redis.lock and redis.lock.Lock (timeout is the key's TTL; the lock offers no validity and holds until release())"
	// SrcLeaseRule is the rule the latency rows rely on, and the argument
	// the single-instance clock rows rest on.
	SrcLeaseRule = "the lease rule: a client counts its lease from before it sent the request (C. Gray, D. Cheriton, \"Leases\", SOSP 1989)"
	SrcSeed      = "the seed article: the single-instance lock SET NX PX with a Lua compare-and-delete release and no validity (locks/setnxseed.go), and RedLock with a quorum of ⌈N/2⌉+1"
	SrcWait      = "Redis docs, WAIT (redis.io/docs/latest/commands/wait/): WAIT does not make Redis a strongly consistent store; a failover may still promote a replica that did not acknowledge"
	SrcFsync     = "Redis docs, persistence (redis.io/docs/latest/operate/oss_and_stack/management/persistence/) and the distributed-locks page's \"Performance, crash recovery and fsync\": appendfsync always keeps every acknowledged write; everysec may lose the last second on a crash"
	SrcRedLockPy = "redlock-py (SPSCommerce/redlock-py): elapsed = int(time.time() * 1000) − start_time, validity = ttl − elapsed − drift, on the wall clock"
	SrcSingle    = "the single-instance argument: one node's key expires by that node's wall clock alone, so a forward jump ends every lock it holds at once (Redis 7 keyIsExpired; " + "M. Kleppmann, \"How to do distributed locking\", 2016)"
	// SrcDeclared is the source of an expectation a lock sets for itself
	// (locks.Promises.SafeUnder).
	SrcDeclared = "declared by the lock (locks.Promises.SafeUnder)"
	// SrcRedisson is the watchdog's design: Redisson's lock renews its key
	// every lockWatchdogTimeout/3 while its holder holds.
	SrcRedisson = "Redisson docs, Locks and synchronizers: the lock watchdog renews the lock every lockWatchdogTimeout/3 while the holder is alive"
	// SrcRueidislock is rueidislock's auto-extend.
	SrcRueidislock = "rueidislock (github.com/redis/rueidis/rueidislock): a lock is auto-extended in the background; its context is cancelled once an extension fails"
	// SrcPause is the source of the node-pause row.
	SrcPause = "Redis docs, \"Distributed Locks with Redis\": the algorithm is safe as long as a majority of the nodes is up and behaves; a stopped minority cannot grant a lease the others refused"
	// SrcLazyFS is the source of the power-loss rows' file system.
	SrcLazyFS = "Jepsen's lazyfs (dsrhaslab/lazyfs): a file system that keeps writes in its own cache until fsync and drops them on a simulated power failure, with which Jepsen finds the writes a database acknowledged before they were durable"
	// SrcStall is the source of the server-stall rows.
	SrcStall = "Redis docs, CLIENT PAUSE (redis.io/docs/latest/commands/client-pause/) and DEBUG SLEEP: the server stops running commands while its process runs on; commands sent meanwhile run when it resumes, and a key whose TTL ran out meanwhile is expired on its next access"
	// SrcConn is the source of the broken-connection rows.
	SrcConn = "toxiproxy's toxics reset_peer, limit_data, slicer and timeout with a toxicity (Shopify/toxiproxy README), and Jepsen's rule that an operation whose reply was lost has an unknown outcome: it may or may not have happened"
	// SrcRepl is the source of the replication-link rows.
	SrcRepl = "Redis docs, replication (redis.io/docs/latest/operate/oss_and_stack/management/replication/): replication is asynchronous, a replica cut off from its master lags and resynchronises once the link is back; Sentinel promotes a replica only when a quorum of sentinels cannot reach the master"
	// SrcCluster is the source of the Redis Cluster rows.
	SrcCluster = "Redis docs, Redis Cluster specification (redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/): replication is asynchronous, so a master can acknowledge a write and fail before its replica receives it, and the promoted replica lacks it; a master partitioned with a minority keeps accepting writes for up to node timeout, and those are lost once the majority promotes its replica; WAIT makes the loss less likely, not impossible"
	// SrcMigrate is the source of the slot migration row.
	SrcMigrate = "Redis docs, Redis Cluster specification, live resharding and ASK redirection (redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/): MIGRATE moves a key atomically, so it is on the source or on the target and never on both, with its expire; a client that misses a key on the migrating node is sent to the importing one with ASK, and once the slot is assigned, with MOVED"
	// SrcEvict is the source of the memory-pressure rows.
	SrcEvict = "Redis docs, \"Key eviction\" (redis.io/docs/latest/develop/reference/eviction/): with maxmemory reached, allkeys-lru evicts the least recently used keys whatever their TTL, and noeviction evicts nothing and refuses the writes that need more memory"
)

// SrcContention is the source of the contention rows: what the locks do
// not promise when many clients want one key.
const SrcContention = "Redis docs, \"Distributed Locks with Redis\": a client that fails to acquire retries after a random delay, to desynchronise clients that try at once and avoid split brain conditions where nobody wins; Redisson docs, FairLock: the plain lock grants in no order, a fair lock grants in the order of the requests; mike-marcacci/node-redlock issues on \"unable to achieve a quorum\" under contention"

// SrcRaft is the consensus side: etcd's lock is a key under a lease that
// one Raft group commits and expires.
const SrcRaft = "etcd docs, leases and the concurrency package (etcd.io/docs/v3.4/learning/api/#lease-api): a lease is granted, renewed and expired by the Raft leader, a key is written only once a majority commits it, and revisions only grow (D. Ongaro, J. Ousterhout, \"In Search of an Understandable Consensus Algorithm\", 2014)"
