package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newAudit) }

// AuditKeyName names the checkpoint signer key (docs/decisions.md D13); it is the
// first part of every verifier key and checkpoint origin cairn writes.
const AuditKeyName = "cairn"

func newAudit() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Export and verify portable proofs of audit sessions",
		Long: `A finalized audit session (merkle_finalize) can leave cairn as a proof
bundle: every record with its hash inputs, the Merkle leaves and root, an
inclusion proof per record, and a checkpoint signed with this installation's
ed25519 key (<data dir>/audit-signing.key). Anyone holding the bundle and the
public key can check it offline with 'cairn audit verify'.`,
	}
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")

	var asPEM bool
	pubkey := &cobra.Command{
		Use:   "pubkey",
		Short: "Print the verifier key that checks this installation's proof bundles",
		Long: `Print the note verifier key (<name>+<hash>+<key>) that 'cairn audit verify
--key' takes; with --pem, the same ed25519 key as a PEM PUBLIC KEY block
(PKIX), which sigstore-go and cosign take to verify a --format sigstore export.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			defer cleanup()
			// A key is minted for a data dir, never for a directory
			// that holds none.
			if _, err := os.Stat(s.DataDir); errors.Is(err, fs.ErrNotExist) && !s.TempDataDir && s.AuditKeyFile == "" {
				return noDataDir(s.DataDir)
			}
			_, vkey, err := bundle.LoadOrCreateKey(bundle.KeyPath(s.DataDir, s.AuditKeyFile), AuditKeyName)
			if err != nil {
				return err
			}
			if asPEM {
				p, err := bundle.PublicKeyPEM(vkey)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(p)
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), vkey)
			return nil
		},
	}
	pubkey.Flags().BoolVar(&asPEM, "pem", false, "print the key as a PEM PUBLIC KEY block (PKIX) for sigstore-go and cosign")

	var out, format string
	var noTimestamp bool
	export := &cobra.Command{
		Use:   "export <session-id>",
		Short: "Write the signed proof bundle of a finalized audit session",
		Long: `Write the proof bundle of a finalized audit session to --out (default
<session-id>.proof.json, or <session-id>.sigstore.json with --format sigstore;
"-" for stdout). --format sigstore writes a Sigstore bundle (v0.3) holding an
in-toto statement in a DSSE envelope, which sigstore-go and cosign verify with
the key 'cairn audit pubkey --pem' prints. The stored trail is verified first:
cairn refuses to sign records that do not verify or whose root differs from
the frozen one. The core area exports the records (through the running
daemon when there is one); this command signs them with the data dir's key.

With CAIRN_AUDIT_TSA_URL set, a Sigstore export is anchored in time: the
RFC 3161 timestamp authority at that URL stamps the SHA-256 of the DSSE
signature and the token is stored in the bundle's
verificationMaterial.timestampVerificationData. If the authority does not
answer with a valid token the export fails (ERR_UPSTREAM_FAILED, naming the
URL) and writes nothing; --no-timestamp exports without asking it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != bundle.ExportCairn && format != bundle.ExportSigstore {
				return errs.Invalidf("format", "enum", "--format %q is neither %q nor %q", format, bundle.ExportCairn, bundle.ExportSigstore)
			}
			c, err := openAreas(cmd.Context(), configFile, reads, "core")
			if err != nil {
				return err
			}
			defer c.close()
			var exp struct {
				Session bundle.Session  `json:"session"`
				Records []bundle.Record `json:"records"`
				Root    string          `json:"root"`
			}
			if _, err := c.call(cmd.Context(), "audit_export", obj{"session_id": args[0]}, &exp); err != nil {
				return err
			}
			meta, records, root, s := exp.Session, exp.Records, exp.Root, c.s
			signer, vkey, err := bundle.LoadOrCreateKey(bundle.KeyPath(s.DataDir, s.AuditKeyFile), AuditKeyName)
			if err != nil {
				return err
			}
			b, err := bundle.BuildBundle(meta, records, root, signer)
			if err != nil {
				return err
			}
			var data []byte
			if format == bundle.ExportSigstore && s.AuditTSAURL != "" && !noTimestamp {
				data, err = bundle.AnchoredSigstore(cmd.Context(), b, signer, vkey, s.AuditTSAURL)
			} else {
				data, err = bundle.Encode(b, format, "format", signer, vkey)
			}
			if err != nil {
				return err
			}
			path := out
			if path == "" {
				path = bundle.FileName(args[0], format)
			}
			if path == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: session %s, %d records, root %s\n", path, meta.SessionID, len(records), root)
			return nil
		},
	}
	export.Flags().StringVarP(&out, "out", "o", "", "output file (default <session-id>.proof.json or .sigstore.json, - for stdout)")
	export.Flags().StringVar(&format, "format", bundle.ExportCairn, "bundle format: cairn, or sigstore (an in-toto statement in a DSSE envelope)")
	export.Flags().BoolVar(&noTimestamp, "no-timestamp", false, "do not ask CAIRN_AUDIT_TSA_URL for a timestamp (--format sigstore)")

	var key, tsaCert string
	verify := &cobra.Command{
		Use:   "verify <bundle-file>",
		Short: "Check a proof bundle offline; exits non-zero naming what broke",
		Long: `Check a proof bundle with nothing but the bundle and a verifier key: every
record's hash, every chain link, the leaves, the root, each inclusion proof and
the signed checkpoint. A Sigstore bundle (--format sigstore, told apart by its
mediaType) is checked for its DSSE signature, its subjects against the
predicate's leaves, and the signed checkpoint. --key takes the verifier key ('cairn audit pubkey' on
the installation that exported the bundle) or a file holding it; without it
the key of this installation's data dir is used.

A Sigstore bundle's RFC 3161 timestamps (CAIRN_AUDIT_TSA_URL) are checked
with --tsa-cert, a PEM file holding the timestamp authority's root (and any
intermediates and its signing certificate): each token must verify against
that chain and stamp the SHA-256 of the DSSE signature; the stamped times
are printed. Without --tsa-cert the timestamps are reported present but
unchecked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return errs.NotFoundf(errs.NotFound, "bundle", "no proof bundle at %s: give the file `cairn audit export <session> -o FILE` wrote", args[0])
				}
				return errs.Invalidf("bundle", "readable", "cannot read the proof bundle %s: %v", args[0], err)
			}
			vkey, err := verifierKeyFor(key, configFile)
			if err != nil {
				return err
			}
			sum, err := bundle.VerifyFile(data, vkey)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			stamps, err := checkTimestamps(data, tsaCert)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "OK: %s proves audit session %s: %d records, root %s, signed by %s (%s bundle)\n",
				args[0], sum.SessionID, sum.Records, sum.Root, strings.SplitN(vkey, "+", 2)[0], sum.Format)
			for _, line := range stamps {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			return nil
		},
	}
	verify.Flags().StringVar(&key, "key", "", "verifier key or its PEM form, or a file holding either (default: this installation's key)")
	verify.Flags().StringVar(&tsaCert, "tsa-cert", "", "PEM certificate chain of the timestamp authority that checks a Sigstore bundle's RFC 3161 timestamps")
	cmd.AddCommand(pubkey, export, verify)
	return cmd
}

// verifierKeyFor resolves --key: a literal verifier key, a file holding one,
// or (when empty) the key of the local data dir, which must already exist:
// verifying must never mint a key.
func verifierKeyFor(flag, configFile string) (string, error) {
	if flag != "" {
		// A verifier key's base64 part may hold '/', so tell the two apart
		// by whether a file of that name exists.
		key := flag
		if data, err := os.ReadFile(flag); err == nil {
			key = strings.TrimSpace(string(data))
		}
		// The PEM form 'cairn audit pubkey --pem' prints names the same key.
		if strings.HasPrefix(key, "-----BEGIN ") {
			return bundle.VerifierKeyFromPEM(AuditKeyName, []byte(key))
		}
		return key, nil
	}
	s, cleanup, err := settings(configFile)
	if err != nil {
		return "", err
	}
	defer cleanup()
	path := bundle.KeyPath(s.DataDir, s.AuditKeyFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", errs.NotFoundf(errs.NotFound, "key", "no signing key at %s: pass --key with the exporter's verifier key ('cairn audit pubkey' where the bundle was made)", path)
	}
	_, vkey, err := bundle.LoadOrCreateKey(path, AuditKeyName)
	return vkey, err
}
