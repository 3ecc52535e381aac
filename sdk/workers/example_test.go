package workers_test

import (
	"fmt"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/workers"
)

// A server runs each call's handler on a pool, so the goroutine that runs
// it keeps the stack earlier calls grew.
func ExamplePool() {
	done := make(chan struct{})
	defer close(done) // idle workers end with the server
	pool := workers.New(done)

	var wg sync.WaitGroup
	results := make([]int, 4)
	for i := range results {
		wg.Add(1)
		pool.Run(func() {
			defer wg.Done()
			results[i] = i * i
		})
	}
	wg.Wait()
	fmt.Println(results)
	// Output: [0 1 4 9]
}

// New ties the idle workers' lifetime to done.
func ExampleNew() {
	done := make(chan struct{})
	pool := workers.New(done)
	ran := make(chan string)
	pool.Run(func() { ran <- "first" })
	fmt.Println(<-ran)
	close(done)
	// Output: first
}

// Run hands f to a waiting worker, or starts one; the zero Pool starts a
// goroutine for each.
func ExamplePool_Run() {
	var pool workers.Pool
	answer := make(chan int)
	pool.Run(func() { answer <- 42 })
	fmt.Println(<-answer)
	// Output: 42
}
