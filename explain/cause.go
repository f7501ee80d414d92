package explain

// Cause is what made a violation happen, as the evidence shows it.
type Cause string

const (
	// ClockJump: a node that granted the earlier lease expired its key
	// during or after a clock fault on it, while the holder's validity ran.
	ClockJump Cause = "clock jump"
	// Restart: a granting node was killed and restarted without
	// persistence, forgot the key, and granted the later lease.
	Restart Cause = "restart without persistence"
	// Failover: a failover promoted a replica without the key, which
	// granted the later lease.
	Failover Cause = "failover promotion without the key"
	// Stalled: a holder's section went on past its validity (a stalled
	// client) and wrote after another's (resource only).
	Stalled Cause = "holder stalled past its validity"
	// ExtendAfterExpiry: a node extended the lease after it had expired or
	// deleted the key.
	ExtendAfterExpiry Cause = "extend after expiry"
	// LateNotice: the earlier holder's lock claims no validity, and the
	// holder learnt of the loss only after the other's grant, or not at
	// all (its process stopped by client-stop, or its lock noticed late).
	LateNotice Cause = "holder told too late"
	// Evicted: a granting node evicted the key under maxmemory with an
	// evicting policy, and granted the later lease.
	Evicted Cause = "key evicted under maxmemory"
	// PowerLoss: a granting node was killed and its unsynced writes, the
	// grant with them, dropped; it came back without the key.
	PowerLoss Cause = "power loss dropped the unsynced grant"
	// ServerStall: a granting node's event loop stopped (DEBUG SLEEP,
	// CLIENT PAUSE) and it expired the key while the holder counted on it.
	ServerStall Cause = "server stall"
	// BrokenConnection: a connection fault (reset, cut, sliced replies,
	// dropped connections) was active between the acquires and no node
	// names another cause: a reply lost with its connection.
	BrokenConnection Cause = "broken connection"
	// ReplicationCut: the primary–replica link was cut or slowed between
	// the acquires, and no node names another cause.
	ReplicationCut Cause = "replication link cut"
	// PromotedWithoutKey: Redis Cluster promoted the replica of the key's
	// master (a forced failover, a killed master), which never had the
	// key before the second grant: the grant was not replicated.
	PromotedWithoutKey Cause = "promoted replica without the key"
	// MinorityMaster: the key's Redis Cluster master, cut off every other
	// node before it granted the first lease, still accepted the write
	// until the node timeout; the majority promoted its replica, without
	// the key, which granted the second.
	MinorityMaster Cause = "minority master accepted the grant"
	// LateGrant: the key an acquire set expired before the acquire
	// returned granted (slow or held replies): the lock did not count the
	// time its round took.
	LateGrant Cause = "granted after its key expired"
	// ExpiredUnderHolder: a granting node expired the key under a healthy
	// holder, no fault active, before the lock told it: the lock let its
	// own key lapse (holds.go).
	ExpiredUnderHolder Cause = "key expired under a healthy holder"
	// GaveUp: the lock gave up a hold no granting node had dropped (a
	// watchdog that stops renewing, a renewal refused in error; holds.go).
	GaveUp Cause = "lock gave up a live hold"
	// LockLogic: no fault explains it; the nodes show the lock itself
	// broke exclusion (a key set over a live one, deleted for another,
	// disjoint quorums, a validity that outlived the key): a mutant.
	LockLogic Cause = "the lock's own logic"
	// Unknown: the evidence does not say.
	Unknown Cause = "unknown"
)

// Causes lists every Cause, in the order of their constants.
var Causes = []Cause{ClockJump, Restart, Failover, PromotedWithoutKey, MinorityMaster, Stalled, ExtendAfterExpiry, LateNotice, Evicted, PowerLoss, ServerStall, BrokenConnection, ReplicationCut, LateGrant, ExpiredUnderHolder, GaveUp, LockLogic, Unknown}

// rank orders causes by how specific they are: a named fault first.
func rank(c Cause) int {
	switch c {
	case ClockJump, Restart, Failover, PromotedWithoutKey, MinorityMaster, ExtendAfterExpiry, LateNotice, Evicted, PowerLoss, LateGrant:
		return 3
	case Stalled, ServerStall, BrokenConnection, ReplicationCut:
		return 2
	case LockLogic:
		return 1
	}
	return 0
}
