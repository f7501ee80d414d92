// Package locks holds the systems under test: Redis lock implementations
// behind one small interface, [Lock].
//
// The two locks the project is about are the single-instance lock
// ("setnx": SET key token NX PX ttl, released by a Lua compare-and-delete)
// and RedLock ("redlock": the same SET on N independent masters, a
// majority quorum, validity = ttl − elapsed − drift). Beside them live
// deliberately broken variants ("mutants"), each with one documented bug,
// which prove that the checkers see what they claim to see.
//
// The single-instance locks can also find their primary through Redis
// Sentinel (Config.Sentinels), with go-redis's failover client; a lease
// that the primary granted but did not replicate before a failover is then
// silently lost, which the harness's failover topology shows.
//
// Every implementation is listed, in a fixed order, in the registry
// ([Specs], [Lookup], [New]) and is selected by name.
//
// This package knows nothing of faults, histories or the harness: it
// imports go-redis and nothing of this module.
package locks
