package locks

import "github.com/redis/go-redis/v9"

// The Lua scripts, each atomic. go-redis falls back from EVALSHA to EVAL
// on NOSCRIPT, so a new or restarted node costs one more round trip.
var (
	// acquireFencedScript is SET NX PX and, only if it set the key, INCR
	// of the counter KEYS[2], returned (else 0): no counter value without
	// the lock, nor the lock without one.
	acquireFencedScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`)

	// acquireOwnScript is SET NX PX (1), or, when the key holds ARGV[1]
	// already (a per-client token), PEXPIRE (2), as Redisson's lock takes
	// its own key again; 0 for another token.
	acquireOwnScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 2
end
return 0`)

	// releaseScript is compare-and-delete: 1 if it deleted, else 0.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

	// extendScript is compare-and-pexpire: 1 if it did, else 0.
	extendScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

	// checkScript is 1 if KEYS[1] holds ARGV[1], else 0: setnx-no-ttl's
	// extend.
	checkScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0`)
)

func fenceKey(key string) string { return key + ":fence" }
