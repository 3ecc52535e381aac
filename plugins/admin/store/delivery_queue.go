package store

// On PostgreSQL the schedule of webhook deliveries is a queue table rather
// than the delivery_due bucket: servers claim due rows with FOR UPDATE SKIP
// LOCKED (package webhooks), so no server waits on another to claim, and a
// claim is a lease (claim_owner, claim_until) that lapses if its server
// dies. The delivery records themselves stay in admin_kv. Times are unix
// nanoseconds, as in the bucket's keys: released held deliveries are due
// one nanosecond apart to keep their order.

// QueueTable is the delivery queue on PostgreSQL.
const QueueTable = "admin_delivery_queue"

var queueTableSQL = `
CREATE TABLE admin_delivery_queue (
	id          text   PRIMARY KEY,
	due         bigint NOT NULL,
	claim_owner text,
	claim_until bigint
);
CREATE INDEX admin_delivery_queue_due ON admin_delivery_queue (due);
` + moveQueueSQL

// moveQueueSQL moves the delivery_due bucket of admin_kv (keys: due as 8
// big-endian bytes, 0, delivery id) into the queue. A delivery claimed on
// bbolt is due at its claim's end there, which is when another server may
// take it here too.
var moveQueueSQL = `
INSERT INTO admin_delivery_queue (id, due)
SELECT convert_from(substring(key FROM 10), 'UTF8'), ('x' || encode(substring(key FROM 1 FOR 8), 'hex'))::bit(64)::bigint
FROM admin_kv WHERE bucket = '` + BucketDeliveryDue + `' AND length(key) > 9
ON CONFLICT (id) DO UPDATE SET due = LEAST(admin_delivery_queue.due, EXCLUDED.due);
DELETE FROM admin_kv WHERE bucket = '` + BucketDeliveryDue + `';
`
