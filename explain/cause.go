package explain

// Cause is what made a violation happen, as the evidence shows it.
type Cause string

const (
	// ClockJump: a node that granted the earlier lease expired its key
	// during or after a clock fault on that node, while the holder's
	// validity ran on.
	ClockJump Cause = "clock jump"
	// Restart: a node that granted the earlier lease was killed and
	// restarted without persistence, forgetting the key, and granted the
	// later lease.
	Restart Cause = "restart without persistence"
	// Failover: a failover promoted a replica that did not have the key,
	// and the new primary granted the later lease.
	Failover Cause = "failover promotion without the key"
	// Stalled: a holder's critical section went on past its lease's
	// validity (a stalled client) and wrote after another's; the leases
	// themselves did not overlap (resource only).
	Stalled Cause = "holder stalled past its validity"
	// ExtendAfterExpiry: the holder's lease was extended on a node after
	// that node had expired or deleted the key, so the validity it was
	// told ran on a key that no longer existed.
	ExtendAfterExpiry Cause = "extend after expiry"
	// LateNotice: the earlier holder's lock claims no validity (it renews
	// itself, or its users hold until they release) and the holder was
	// told it lost the lock only after the other client was granted it,
	// or not at all before it released: its whole process was stopped (a
	// client-stop fault) while its key expired, or its lock noticed the
	// loss too late.
	LateNotice Cause = "holder told too late"
	// Evicted: a node that granted the earlier lease evicted its key under
	// memory pressure (maxmemory with an evicting policy) and granted the
	// later lease.
	Evicted Cause = "key evicted under maxmemory"
	// PowerLoss: a node that granted the earlier lease lost its power: it
	// was killed and what it had written but not fsynced was dropped, the
	// grant with it; it came back without the key and granted the later
	// lease.
	PowerLoss Cause = "power loss dropped the unsynced grant"
	// ServerStall: a node that granted the earlier lease stalled (its
	// event loop stopped, DEBUG SLEEP or CLIENT PAUSE) and expired the key
	// while the holder counted on it.
	ServerStall Cause = "server stall"
	// BrokenConnection: a connection fault (a reset, a cut after some
	// bytes, sliced replies, dropped connections) was active between the
	// two acquires, and no node's evidence names another cause: a reply
	// lost with its connection, an outcome the lock took for known.
	BrokenConnection Cause = "broken connection"
	// ReplicationCut: the link between the primary and its replica was cut
	// or slowed between the two acquires, and no node's evidence names
	// another cause.
	ReplicationCut Cause = "replication link cut"
	// PromotedWithoutKey: on Redis Cluster, the master of the key's slot
	// granted the first lease and the cluster then promoted its replica
	// (a forced failover, a killed master), which the node evidence shows
	// never had the key before the second grant: the grant had not been
	// replicated.
	PromotedWithoutKey Cause = "promoted replica without the key"
	// MinorityMaster: on Redis Cluster, the master of the key's slot was
	// cut off every other node (cluster-partition-master) before it
	// granted the first lease: a minority of one, it still accepted the
	// write until the node timeout told it so, and the majority promoted
	// its replica, which the node evidence shows never had the key, and
	// which granted the second.
	MinorityMaster Cause = "minority master accepted the grant"
	// LateGrant: the key an acquire set expired before that acquire
	// returned granted (its replies were slow, or held by a fault): the
	// lock did not count the time its round took, and told its holder it
	// held a key that was already gone, which the next client set.
	LateGrant Cause = "granted after its key expired"
	// ExpiredUnderHolder: a node that granted the lease expired its key
	// while its holder was healthy and no fault was active, before the
	// lock told the holder: the lock let its own key lapse (a renewal
	// that came late or set too short an expiry). A holds finding
	// (holds.go).
	ExpiredUnderHolder Cause = "key expired under a healthy holder"
	// GaveUp: the lock gave up a hold no node had dropped: no node that
	// granted it removed the key before the lock said it was lost (a
	// watchdog that stops renewing, a renewal refused in error). A holds
	// finding (holds.go).
	GaveUp Cause = "lock gave up a live hold"
	// LockLogic: no fault explains it; the nodes' evidence shows the lock
	// itself broke exclusion (a key set over a live one, deleted for
	// another client, quorums that do not intersect, a validity that
	// outlived the key): a mutant.
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
