package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/remote"
	"github.com/spf13/cobra"
)

// errExternalBlob: blob get on a blob that lives at an external URI; the
// CLI reports the URI and never fetches it (spec/surfaces.md §1.3).
var errExternalBlob = errors.New("blob is external")

// errBlobRange: --offset past the end of the blob.
var errBlobRange = errors.New("blob range not satisfiable")

type blobOptions struct {
	branch, snapshot string
	offset, length   int64
	out              string
	json             bool
}

// blobSelectorJSON and blobStatJSON are the `blob stat --json` shape.
type blobSelectorJSON struct {
	Entity   string `json:"entity"`
	Type     string `json:"type"`
	ID       string `json:"id"`
	Property string `json:"property"`
}

type blobTargetJSON struct {
	Branch           *string `json:"branch,omitempty"`
	Snapshot         *string `json:"snapshot,omitempty"`
	ResolvedSnapshot string  `json:"resolved_snapshot"`
}

type blobStatJSON struct {
	Selector blobSelectorJSON `json:"selector"`
	Kind     string           `json:"kind"` // managed | external
	Size     *int64           `json:"size,omitempty"`
	ETag     *string          `json:"etag,omitempty"`
	URI      *string          `json:"uri,omitempty"`
	Target   blobTargetJSON   `json:"target"`
}

func (a *app) newBlobCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blob",
		Short: "Read or describe one Blob property of a node or edge",
		Long: `Read (get) or describe (stat) the Blob value of one property of one node or
edge, at a branch head or a commit. ENTITY is node or edge, TYPE the type
name, ID the entity's id (its @key value for keyed node types).

An external blob (one stored as a URI) is reported, never fetched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return usagef("give a subcommand: get or stat") },
	}
	var o blobOptions
	get := &cobra.Command{
		Use:   "get ENTITY TYPE ID PROPERTY [--out PATH] [--offset N] [--length N]",
		Short: "Write a Blob's bytes to standard output or --out PATH",
		Args:  exactArgs(4, "ENTITY TYPE ID PROPERTY"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runBlobGet(cmd, args, &o)
		}),
	}
	stat := &cobra.Command{
		Use:   "stat ENTITY TYPE ID PROPERTY [--json]",
		Short: "Describe a Blob: managed or external, size, entity tag, the commit read",
		Args:  exactArgs(4, "ENTITY TYPE ID PROPERTY"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runBlobStat(cmd, args, &o)
		}),
	}
	for _, c := range []*cobra.Command{get, stat} {
		acceptGlobals(c, "store")
		c.Flags().StringVar(&o.branch, "branch", "", "branch to read (default main)")
		c.Flags().StringVar(&o.snapshot, "snapshot", "", "commit to read: an id, a unique id prefix, BRANCH, BRANCH~N or BRANCH^")
		c.MarkFlagsMutuallyExclusive("branch", "snapshot")
	}
	get.Flags().Int64Var(&o.offset, "offset", 0, "first byte to write")
	get.Flags().Int64Var(&o.length, "length", 0, "number of bytes to write (> 0; default: to the end)")
	get.Flags().StringVar(&o.out, "out", "", "write to this file (replaced atomically) instead of standard output")
	stat.Flags().BoolVar(&o.json, "json", false, "print the description as JSON")
	cmd.AddCommand(get, stat)
	return cmd
}

// exactArgs is cobra.ExactArgs with a message naming the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (%d arguments), got %d", cmd.CommandPath(), names, n, len(args))
		}
		return nil
	}
}

func blobArgs(args []string) (omnigraph.BlobCell, error) {
	switch args[0] {
	case "node", "edge":
	default:
		return omnigraph.BlobCell{}, usagef("ENTITY must be node or edge, not %q", args[0])
	}
	return omnigraph.BlobCell{Edge: args[0] == "edge", Type: args[1], ID: args[2], Property: args[3]}, nil
}

func (o *blobOptions) checkRange(cmd *cobra.Command) error {
	if o.offset < 0 {
		return usagef("--offset must be 0 or more, not %d", o.offset)
	}
	if cmd.Flags().Changed("length") && o.length <= 0 {
		return usagef("--length must be greater than 0, not %d", o.length)
	}
	return nil
}

func (a *app) runBlobGet(cmd *cobra.Command, args []string, o *blobOptions) error {
	if err := o.checkRange(cmd); err != nil {
		return err
	}
	b, err := a.readBlob(cmd, args, o)
	if err != nil {
		return err
	}
	if b.Data == nil {
		return fmt.Errorf("%w: %s (fetch it from there; omnigraph does not follow external URIs)", errExternalBlob, b.URI)
	}
	size := int64(len(b.Data))
	if o.offset > size || (o.offset == size && size > 0) {
		return fmt.Errorf("%w: --offset %d is past the end of a blob of %d bytes", errBlobRange, o.offset, size)
	}
	end := size
	if o.length > 0 {
		end = min(size, o.offset+o.length)
	}
	return a.writeBlob(o.out, func(w io.Writer) error {
		_, err := w.Write(b.Data[o.offset:end])
		return err
	})
}

// writeBlob writes to standard output, or to path through a temporary file
// renamed into place (a failed read leaves no partial file).
func (a *app) writeBlob(path string, fill func(io.Writer) error) error {
	if path == "" {
		return fill(a.io.Out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// readBlob reads the cell args select from the embedded graph.
func (a *app) readBlob(cmd *cobra.Command, args []string, o *blobOptions) (*omnigraph.Blob, error) {
	cell, err := blobArgs(args)
	if err != nil {
		return nil, err
	}
	g, _, err := a.open(cmd, nil, "")
	if err != nil {
		return nil, err
	}
	return g.ReadBlob(cmd.Context(), omnigraph.Target{Branch: o.branch, Snapshot: o.snapshot}, cell)
}

func (a *app) runBlobStat(cmd *cobra.Command, args []string, o *blobOptions) error {
	b, err := a.readBlob(cmd, args, o)
	if err != nil {
		return err
	}
	st := blobStat(args, o, b.Commit.ID)
	if b.Data == nil {
		st.Kind, st.URI = "external", &b.URI
	} else {
		n, tag := int64(len(b.Data)), b.ETag()
		st.Size, st.ETag = &n, &tag
	}
	return a.printBlobStat(st, o.json)
}

func blobStat(args []string, o *blobOptions, resolved string) blobStatJSON {
	st := blobStatJSON{Selector: blobSelectorJSON{Entity: args[0], Type: args[1], ID: args[2], Property: args[3]}, Kind: "managed",
		Target: blobTargetJSON{ResolvedSnapshot: resolved}}
	if o.snapshot != "" {
		st.Target.Snapshot = strPtr(o.snapshot)
	} else {
		b := o.branch
		if b == "" {
			b = "main"
		}
		st.Target.Branch = &b
	}
	return st
}

func (a *app) printBlobStat(st blobStatJSON, asJSON bool) error {
	if asJSON {
		return a.printJSON(st)
	}
	fmt.Fprintf(a.io.Out, "%s %s %s.%s: %s", st.Selector.Entity, st.Selector.ID, st.Selector.Type, st.Selector.Property, st.Kind)
	if st.Size != nil {
		fmt.Fprintf(a.io.Out, ", %d bytes, etag %s", *st.Size, *st.ETag)
	}
	if st.URI != nil {
		fmt.Fprintf(a.io.Out, ", uri %s", *st.URI)
	}
	fmt.Fprintf(a.io.Out, " (at %s)\n", st.Target.ResolvedSnapshot)
	return nil
}

func (a *app) servedBlobGet(cmd *cobra.Command, args []string, rc *remote.Client) error {
	o := blobOptsOf(cmd)
	if _, err := blobArgs(args); err != nil {
		return err
	}
	if err := o.checkRange(cmd); err != nil {
		return err
	}
	resp, err := rc.Blob(cmd.Context(), remote.BlobRequest{Entity: args[0], Type: args[1], ID: args[2], Property: args[3],
		Branch: o.branch, Snapshot: o.snapshot, Offset: o.offset, Length: o.length}, false)
	if err != nil {
		return err
	}
	if resp.Location != "" {
		return fmt.Errorf("%w: %s (fetch it from there; omnigraph does not follow external URIs)", errExternalBlob, resp.Location)
	}
	defer resp.Body.Close()
	return a.writeBlob(o.out, func(w io.Writer) error {
		_, err := io.Copy(w, resp.Body)
		return err
	})
}

func (a *app) servedBlobStat(cmd *cobra.Command, args []string, rc *remote.Client) error {
	o := blobOptsOf(cmd)
	if _, err := blobArgs(args); err != nil {
		return err
	}
	resp, err := rc.Blob(cmd.Context(), remote.BlobRequest{Entity: args[0], Type: args[1], ID: args[2], Property: args[3],
		Branch: o.branch, Snapshot: o.snapshot}, true)
	if err != nil {
		return err
	}
	st := blobStat(args, o, resp.Snapshot)
	if resp.Location != "" {
		st.Kind, st.URI = "external", &resp.Location
	} else {
		n, tag := resp.Size, resp.ETag
		st.Size, st.ETag = &n, &tag
	}
	return a.printBlobStat(st, o.json)
}

func blobOptsOf(cmd *cobra.Command) *blobOptions {
	o := &blobOptions{branch: flagString(cmd, "branch"), snapshot: flagString(cmd, "snapshot"), out: flagString(cmd, "out")}
	if f := cmd.Flags().Lookup("offset"); f != nil {
		o.offset, _ = cmd.Flags().GetInt64("offset")
		o.length, _ = cmd.Flags().GetInt64("length")
	}
	if f := cmd.Flags().Lookup("json"); f != nil {
		o.json, _ = cmd.Flags().GetBool("json")
	}
	return o
}
