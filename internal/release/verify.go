package release

import (
	"os"
	"path/filepath"
)

// Verify checks a downloaded release folder as a user does by hand: the
// checksum file's signature with the public key pubPEM (the project's,
// pinned once, not the cosign.pub beside the files, which anyone could
// replace with the files), then every file it lists.
func Verify(dir string, pubPEM []byte) error {
	sums, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		return err
	}
	sig, err := os.ReadFile(filepath.Join(dir, SignatureFile))
	if err != nil {
		return err
	}
	if err := VerifyBlob(pubPEM, sig, sums); err != nil {
		return err
	}
	return VerifyChecksums(dir, sums)
}
