package main

// answer is what the plugin answers every call with: a task as task_get
// returns one (the fields and about the size of a task of the benchmark's
// seeded store), so the floor carries the bytes cairn's call carries.
var answer = []byte(`{"task_id":"T-5001","title":"parser cache task 5001","description":"Details about login and metrics.","project":"proj-1","status":"todo","priority":"high","progress":0,"labels":["cache"],"depends_on":[],"created_at":"2026-11-28T23:59:01.123456789Z","updated_at":"2026-11-28T23:59:02.123456789Z","created_by":"seed","updated_by":"seed","claimed_by":"","version":2}`)
