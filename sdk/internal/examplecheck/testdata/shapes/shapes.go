// Package shapes is examplecheck's test fixture: some of its exported
// names have examples, some do not.
package shapes

// Square has an example.
type Square struct{ Side int }

// NewSquare has an example.
func NewSquare(side int) Square { return Square{Side: side} }

// Area has an example.
func (s Square) Area() int { return s.Side * s.Side }

// Perimeter has none.
func (s Square) Perimeter() int { return 4 * s.Side }

// Circle has none, nor has its method.
type Circle struct{ R int }

// Diameter has none.
func (c Circle) Diameter() int { return 2 * c.R }

// Scale has none.
func Scale(n int) int { return n }

// unexported names need none.
func double(n int) int { return 2 * n }

var _ = double
