// Package tree is the Merkle tree of cairn's audit sessions (docs/decisions.md D12),
// built on github.com/transparency-dev/merkle.
//
// D12 differs from RFC 6962 in its hashing only: a leaf is the raw 32-byte
// record hash itself and an internal node is SHA-256(left || right), with no
// domain-separation prefixes, so that anyone can recompute a root from the
// record hashes with nothing but SHA-256. The shape is RFC 6962's (split at
// the largest power of two below n, a lone node carried up), which lets the
// library's compact ranges and proof code do the work. Without prefixes an
// internal node could pose as a leaf; the checkpoint fixes the tree size and
// proofs have a size-determined length, which is what keeps proofs honest.
package tree

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"

	"github.com/transparency-dev/merkle"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
)

// HashSize is the size of every node hash.
const HashSize = sha256.Size

// Hasher is the D12 merkle.LogHasher.
type Hasher struct{}

var _ merkle.LogHasher = Hasher{}

// emptyRoot is SHA-256 of the empty input, the root of a tree with no leaves.
var emptyRoot = sha256.Sum256(nil)

// EmptyRoot returns SHA-256 of the empty input.
func (Hasher) EmptyRoot() []byte { r := emptyRoot; return r[:] }

// HashLeaf returns the leaf unchanged: leaves are already record hashes.
func (Hasher) HashLeaf(leaf []byte) []byte { return leaf }

// HashChildren returns SHA-256(l || r).
func (Hasher) HashChildren(l, r []byte) []byte {
	if len(l)+len(r) > 2*HashSize { // not D12 input, but never panic
		h := sha256.New()
		h.Write(l)
		h.Write(r)
		return h.Sum(nil)
	}
	var buf [2 * HashSize]byte
	n := copy(buf[:], l)
	n += copy(buf[n:], r)
	s := sha256.Sum256(buf[:n])
	return s[:]
}

// Size returns the hash size, 32.
func (Hasher) Size() int { return HashSize }

// slabHasher hashes children into slices carved from large blocks: a root over
// a million leaves computes a million nodes, and one allocation each would be
// a fair share of the time.
type slabHasher struct{ block []byte }

func (s *slabHasher) hash(l, r []byte) []byte {
	if len(l)+len(r) > 2*HashSize {
		return Hasher{}.HashChildren(l, r)
	}
	if len(s.block) < HashSize {
		s.block = make([]byte, 4096*HashSize)
	}
	var buf [2 * HashSize]byte
	n := copy(buf[:], l)
	n += copy(buf[n:], r)
	sum := sha256.Sum256(buf[:n])
	out := s.block[:HashSize:HashSize]
	s.block = s.block[HashSize:]
	copy(out, sum[:])
	return out
}

// Root returns the D12 root of leaves (each a 32-byte record hash). It runs in
// O(n) time and O(log n) live memory on a compact range.
func Root(leaves [][]byte) []byte {
	if len(leaves) == 0 {
		return Hasher{}.EmptyRoot()
	}
	factory := &compact.RangeFactory{Hash: (&slabHasher{}).hash}
	r := factory.NewEmptyRange(0)
	for _, l := range leaves {
		// Append fails only on corrupted ranges, which cannot happen here.
		if err := r.Append(l, nil); err != nil {
			panic(err)
		}
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		panic(err)
	}
	return root
}

// TreeDepth returns the height of a tree of n leaves: ceil(log2 n), 0 for
// n ≤ 1.
func TreeDepth(n uint64) int {
	if n <= 1 {
		return 0
	}
	return bits.Len64(n - 1)
}

// Tree keeps every perfect subtree hash of a tree (about 2n hashes) so that
// the inclusion proofs of all leaves cost O(log n) each, as a bundle needs
// one proof per record.
type Tree struct {
	// levels[h][i] is the root of the perfect subtree of height h covering
	// leaves [i·2^h, (i+1)·2^h).
	levels [][][]byte
	size   uint64
}

// New builds a Tree over leaves (each 32 bytes). The leaves are not copied.
func New(leaves [][]byte) (*Tree, error) {
	for i, l := range leaves {
		if len(l) != HashSize {
			return nil, fmt.Errorf("leaf %d has %d bytes, want %d", i, len(l), HashSize)
		}
	}
	t := &Tree{size: uint64(len(leaves)), levels: [][][]byte{leaves}}
	for cur := leaves; len(cur) > 1; {
		next := make([][]byte, len(cur)/2)
		for i := range next {
			next[i] = Hasher{}.HashChildren(cur[2*i], cur[2*i+1])
		}
		t.levels = append(t.levels, next)
		cur = next
	}
	return t, nil
}

// Size returns the number of leaves.
func (t *Tree) Size() uint64 { return t.size }

// Root returns the D12 root.
func (t *Tree) Root() []byte {
	if t.size == 0 {
		return Hasher{}.EmptyRoot()
	}
	// The right border of an imperfect tree is hashed from the perfect
	// subtrees that cover [0, size), right to left.
	ids := compact.RangeNodes(0, t.size, nil)
	root := t.node(ids[len(ids)-1])
	for i := len(ids) - 2; i >= 0; i-- {
		root = Hasher{}.HashChildren(t.node(ids[i]), root)
	}
	return root
}

func (t *Tree) node(id compact.NodeID) []byte { return t.levels[id.Level][id.Index] }

// InclusionProof returns the audit path of leaf index, from the leaf upwards.
func (t *Tree) InclusionProof(index uint64) ([][]byte, error) {
	nodes, err := proof.Inclusion(index, t.size)
	if err != nil {
		return nil, err
	}
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		hashes[i] = t.node(id)
	}
	return nodes.Rehash(hashes, Hasher{}.HashChildren)
}

// InclusionProof returns the audit path of leaves[index]. Building a Tree is
// cheaper when more than one proof is needed.
func InclusionProof(leaves [][]byte, index uint64) ([][]byte, error) {
	t, err := New(leaves)
	if err != nil {
		return nil, err
	}
	return t.InclusionProof(index)
}

// ErrMismatch is returned (wrapped) when a proof leads to a different root.
var ErrMismatch = errors.New("inclusion proof does not lead to the root")

// VerifyInclusion checks that leaf sits at index in the tree of the given
// size whose root is root, using proof (from InclusionProof).
func VerifyInclusion(leaf []byte, index, size uint64, path [][]byte, root []byte) error {
	for i, p := range path {
		if len(p) != HashSize {
			return fmt.Errorf("proof hash %d has %d bytes, want %d", i, len(p), HashSize)
		}
	}
	got, err := proof.RootFromInclusionProof(Hasher{}, index, size, leaf, path)
	if err != nil {
		return err
	}
	if !equal(got, root) {
		return fmt.Errorf("%w: leaf %d of %d", ErrMismatch, index, size)
	}
	return nil
}

func equal(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	var d byte
	for i := range a {
		d |= a[i] ^ b[i]
	}
	return d == 0
}
