package tree

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
)

// refRoot is D12 written out plainly: split at the largest power of two
// below n, hash the two halves, concatenate, SHA-256; a leaf is itself.
func refRoot(leaves [][]byte) []byte {
	switch len(leaves) {
	case 0:
		s := sha256.Sum256(nil)
		return s[:]
	case 1:
		return leaves[0]
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	l, r := refRoot(leaves[:k]), refRoot(leaves[k:])
	s := sha256.Sum256(append(append([]byte{}, l...), r...))
	return s[:]
}

// refPath is RFC 6962's PATH(m, D[n]) with D12's node hash.
func refPath(m int, leaves [][]byte) [][]byte {
	if len(leaves) <= 1 {
		return nil
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	if m < k {
		return append(refPath(m, leaves[:k]), refRoot(leaves[k:]))
	}
	return append(refPath(m-k, leaves[k:]), refRoot(leaves[:k]))
}

func makeLeaves(n int) [][]byte {
	leaves := make([][]byte, n)
	for i := range leaves {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		s := sha256.Sum256(b[:])
		leaves[i] = s[:]
	}
	return leaves
}

func TestRootAgainstReference(t *testing.T) {
	t.Parallel()
	for n := 0; n <= 70; n++ {
		leaves := makeLeaves(n)
		want := refRoot(leaves)
		if got := Root(leaves); !bytes.Equal(got, want) {
			t.Fatalf("n=%d: Root %x, reference %x", n, got, want)
		}
		tr, err := New(leaves)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Root(); !bytes.Equal(got, want) {
			t.Fatalf("n=%d: Tree.Root %x, reference %x", n, got, want)
		}
	}
}

func TestKnownRoots(t *testing.T) {
	t.Parallel()
	// The empty root is SHA-256 of nothing; one leaf is its own root; a lone
	// third leaf is carried up, never paired with itself.
	if got := hex.EncodeToString(Root(nil)); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty root %s", got)
	}
	l := makeLeaves(3)
	if !bytes.Equal(Root(l[:1]), l[0]) {
		t.Fatal("single leaf must be the root")
	}
	h := func(a, b []byte) []byte { s := sha256.Sum256(append(append([]byte{}, a...), b...)); return s[:] }
	if !bytes.Equal(Root(l), h(h(l[0], l[1]), l[2])) {
		t.Fatal("three leaves must hash as H(H(l0,l1), l2)")
	}
}

func TestTreeDepth(t *testing.T) {
	t.Parallel()
	for n, want := range map[uint64]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 8: 3, 9: 4, 1 << 20: 20, 1_000_000: 20, 1<<20 + 1: 21} {
		if got := TreeDepth(n); got != want {
			t.Errorf("TreeDepth(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestInclusionProofs(t *testing.T) {
	t.Parallel()
	sizes := makeLeaves(2*70 + 1)
	for n := 1; n <= 70; n++ {
		leaves := sizes[:n]
		tr, _ := New(leaves)
		root := refRoot(leaves)
		for i := 0; i < n; i++ {
			p, err := tr.InclusionProof(uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			if want := refPath(i, leaves); len(p) != len(want) || (len(p) > 0 && !bytes.Equal(bytes.Join(p, nil), bytes.Join(want, nil))) {
				t.Fatalf("n=%d i=%d: proof differs from RFC 6962 PATH", n, i)
			}
			if err := VerifyInclusion(leaves[i], uint64(i), uint64(n), p, root); err != nil {
				t.Fatalf("n=%d i=%d: %v", n, i, err)
			}
			// Wrong leaf.
			if n > 1 {
				if VerifyInclusion(leaves[(i+1)%n], uint64(i), uint64(n), p, root) == nil {
					t.Fatalf("n=%d i=%d: wrong leaf verified", n, i)
				}
			}
			// Wrong index (every other index of the tree, and out of range).
			for j := 0; j <= n; j++ {
				if j != i && VerifyInclusion(leaves[i], uint64(j), uint64(n), p, root) == nil {
					t.Fatalf("n=%d i=%d: verified at index %d", n, i, j)
				}
			}
			// Wrong size. A proof cannot tell sizes apart whose audit paths
			// for this index have the same shape (n=3 and n=4 for index 0):
			// the size is authenticated by the signed checkpoint, not the
			// proof. Every other size must fail.
			for m := 1; m <= 2*n+1; m++ {
				if m == n || (m > i && len(refPath(i, sizes[:m])) == len(p)) {
					continue
				}
				if VerifyInclusion(leaves[i], uint64(i), uint64(m), p, root) == nil {
					t.Fatalf("n=%d i=%d: verified with size %d", n, i, m)
				}
			}
			// Wrong root.
			bad := append([]byte{}, root...)
			bad[0] ^= 1
			if err := VerifyInclusion(leaves[i], uint64(i), uint64(n), p, bad); !errors.Is(err, ErrMismatch) {
				t.Fatalf("n=%d i=%d: wrong root gave %v", n, i, err)
			}
			// A flipped bit anywhere in the proof.
			for k := range p {
				q := make([][]byte, len(p))
				copy(q, p)
				q[k] = append([]byte{}, p[k]...)
				q[k][31] ^= 0x80
				if VerifyInclusion(leaves[i], uint64(i), uint64(n), q, root) == nil {
					t.Fatalf("n=%d i=%d: tampered proof hash %d verified", n, i, k)
				}
			}
		}
		if _, err := tr.InclusionProof(uint64(n)); err == nil {
			t.Fatalf("n=%d: proof for index %d", n, n)
		}
	}
	if _, err := InclusionProof(nil, 0); err == nil {
		t.Fatal("proof in an empty tree")
	}
	if _, err := New([][]byte{{1, 2}}); err == nil {
		t.Fatal("short leaf accepted")
	}
	if err := VerifyInclusion(make([]byte, 32), 0, 2, [][]byte{{1}}, make([]byte, 32)); err == nil {
		t.Fatal("short proof hash accepted")
	}
}

func TestInclusionProofFunction(t *testing.T) {
	t.Parallel()
	leaves := makeLeaves(13)
	p, err := InclusionProof(leaves, 12)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyInclusion(leaves[12], 12, 13, p, Root(leaves)); err != nil {
		t.Fatal(err)
	}
}

func TestHasherNeverPanics(t *testing.T) {
	t.Parallel()
	_ = Hasher{}.HashChildren(make([]byte, 100), make([]byte, 100))
	_ = Root([][]byte{{1}, make([]byte, 70), nil})
}

func BenchmarkRoot1M(b *testing.B) {
	leaves := makeLeaves(1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Root(leaves)
	}
}

func BenchmarkBuildTreeAndProofs10k(b *testing.B) {
	leaves := makeLeaves(10_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr, _ := New(leaves)
		for i := range leaves {
			if _, err := tr.InclusionProof(uint64(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRawSHA256Of1MLeaves is the physical limit beside BenchmarkRoot1M:
// the n-1 SHA-256 compressions over 64-byte node inputs that any D12 root of
// a million leaves must compute, with no tree bookkeeping at all.
func BenchmarkRawSHA256Of1MLeaves(b *testing.B) {
	leaves := makeLeaves(1_000_000)
	var buf [64]byte
	var sink byte
	b.ResetTimer()
	for b.Loop() {
		for i := 1; i < len(leaves); i++ {
			copy(buf[:32], leaves[i-1])
			copy(buf[32:], leaves[i])
			sum := sha256.Sum256(buf[:])
			sink ^= sum[0]
		}
	}
	rawSink = sink
}

// rawSink keeps BenchmarkRawSHA256Of1MLeaves' hashes from being optimized
// away.
var rawSink byte
