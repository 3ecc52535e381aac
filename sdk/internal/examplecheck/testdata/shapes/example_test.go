package shapes_test

import (
	"fmt"

	"example.invalid/shapes"
)

func ExampleSquare() { fmt.Println(shapes.Square{Side: 2}) }

func ExampleNewSquare() { fmt.Println(shapes.NewSquare(2)) }

func ExampleSquare_Area() { fmt.Println(shapes.NewSquare(2).Area()) }
