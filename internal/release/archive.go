package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"time"
)

// Entry is one file of an archive: its name inside, its mode, and its
// bytes, given as Body or read from Path.
type Entry struct {
	Name string
	Mode fs.FileMode
	Body []byte
	Path string
}

func (e Entry) open() (io.ReadCloser, int64, error) {
	if e.Path == "" {
		return io.NopCloser(bytes.NewReader(e.Body)), int64(len(e.Body)), nil
	}
	f, err := os.Open(e.Path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// WriteTarGz writes entries, in their order, as a gzip-compressed tar to
// path. Every time in it is mtime and no owner is named, so the same
// entries give the same bytes: a release can be rebuilt and compared.
func WriteTarGz(path string, mtime time.Time, entries []Entry) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		r, size, err := e.open()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: e.Name, Mode: int64(e.Mode.Perm()), Size: size, ModTime: mtime,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX, Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(hdr); err != nil {
			r.Close()
			return err
		}
		_, err = io.Copy(tw, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// WriteZip writes entries, in their order, as a zip to path, with mtime on
// every entry and each entry's Unix mode kept (an executable stays one).
func WriteZip(path string, mtime time.Time, entries []Entry) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	zw := zip.NewWriter(f)
	for _, e := range entries {
		r, _, err := e.open()
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: mtime.UTC()}
		hdr.SetMode(e.Mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			r.Close()
			return err
		}
		_, err = io.Copy(w, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
}
