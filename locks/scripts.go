package locks

import "github.com/redis/go-redis/v9"

// The Lua scripts, each run atomically by Redis. go-redis sends EVALSHA
// and falls back to EVAL when the node answers NOSCRIPT (a new or
// restarted node), so the first call on a node costs one more round trip.
var (
	// acquireFencedScript sets KEYS[1] to ARGV[1] with NX and PX ARGV[2]
	// and, only if the SET succeeded, increments the counter KEYS[2] and
	// returns it; it returns 0 when the key was already held. Doing both
	// in one script means a counter value is never issued without the
	// lock, nor the lock granted without a counter value.
	acquireFencedScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`)

	// acquireOwnScript sets KEYS[1] to ARGV[1] with NX and PX ARGV[2] and
	// returns 1; if the key already holds ARGV[1] (a token fixed per
	// client, found again), it sets its expiry to ARGV[2] milliseconds
	// and returns 2, as Redisson's lock takes its own key again; it
	// returns 0 when another token holds the key.
	acquireOwnScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 2
end
return 0`)

	// releaseScript deletes KEYS[1] only if it holds ARGV[1]
	// (compare-and-delete); it returns 1 if it deleted the key, else 0.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

	// extendScript sets the expiry of KEYS[1] to ARGV[2] milliseconds only
	// if it holds ARGV[1] (compare-and-pexpire); it returns 1 if it did,
	// else 0.
	extendScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

	// checkScript returns 1 if KEYS[1] holds ARGV[1], else 0, and changes
	// nothing: the "extend" of setnx-no-ttl, whose keys never expire.
	checkScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0`)
)

// fenceKey is the key of the fencing counter that goes with the lock key.
func fenceKey(key string) string { return key + ":fence" }
