package examplecheck

import (
	"slices"
	"testing"
)

// The fixture's names without an example are found, and only those: a
// func, a type, methods, and a constructor listed under its type.
func TestMissingFindsNamesWithoutExamples(t *testing.T) {
	got, err := Missing("testdata/shapes")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Circle", "Circle.Diameter", "Scale", "Square.Perimeter"}
	if !slices.Equal(got, want) {
		t.Fatalf("Missing = %v, want %v", got, want)
	}
}
