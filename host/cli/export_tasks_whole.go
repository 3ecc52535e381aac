package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/cairn-mcp/cairn/host/internal/backlogmd"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// cutMark is what every text the import cut holds (importedtext's title
// and description markers both open with it), so a line without it needs
// no decoding.
var cutMark = []byte("[…")

// copyWholeLines copies task_export's JSON Lines from src to dst, putting
// back in each task whose title or description the import cut the whole
// text its trail keeps (docs/decisions.md D41: nothing is lost, so a
// board exported as JSON Lines and imported elsewhere is whole). Lines of
// uncut tasks are copied byte for byte; a mended line keeps every member,
// in encoding/json's order.
func copyWholeLines(ctx context.Context, c *areaClient, src io.Reader, dst io.Writer) error {
	r := bufio.NewReaderSize(src, 64<<10)
	w := bufio.NewWriterSize(dst, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if bytes.Contains(line, cutMark) {
				if line, err = wholeLine(ctx, c, line); err != nil {
					return err
				}
			}
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return w.Flush()
		}
		if err != nil {
			return errs.Newf(500, errs.Internal, "cannot read the export: %v", err)
		}
	}
}

// wholeLine is one exported task's line with its cut texts made whole.
func wholeLine(ctx context.Context, c *areaClient, line []byte) ([]byte, error) {
	var t backlogmd.Task
	if err := json.Unmarshal(line, &t); err != nil {
		return nil, errs.Newf(500, errs.Internal, "task_export wrote a line that is not a task: %v", err)
	}
	if len(backlogmd.CutFields(t)) == 0 {
		return line, nil
	}
	trail, err := trailRecords(ctx, c, t.TaskID, "discovery")
	if err != nil {
		return nil, err
	}
	whole := backlogmd.Whole(t, trail)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil {
		return nil, errs.Newf(500, errs.Internal, "task_export wrote a line that is not an object: %v", err)
	}
	for name, text := range map[string]string{"title": whole.Title, "description": whole.Description} {
		b, err := json.Marshal(text)
		if err != nil {
			return nil, err
		}
		members[name] = b
	}
	out, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
