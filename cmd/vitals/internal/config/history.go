package config

import (
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml/ast"
)

// History is where the checks' kept results are saved, so that a restart
// of vitals keeps what the status page shows of them.
type History struct {
	// File is where they are written, and read at start; "" (the default):
	// nowhere, and a restart begins every history anew.
	File string
}

// historyFields are the fields of the history: block, read into h.
func historyFields(h *History) []Field {
	return []Field{
		{Key: "file", Value: CString(&h.File), Required: true,
			Doc: "Required: the file where vitals saves each check's kept results (at most every 10 seconds while they change, and when it stops), written whole to a temporary file beside it and renamed, and reads them at start: a check of the same name and definition begins with them, as its history on the status page, deciding nothing. " +
				"In a pod, a file on an emptyDir volume, which a container's restart keeps and the pod's deletion clears. The outputs in it are those the page shows, redacted; it is made 0600."},
	}
}

// historyBlock reads the history: block and, unless offline, checks that
// its file's directory is there.
func (d *Decoder) historyBlock(n ast.Node, path string) History {
	var h History
	mark := d.Failures()
	given, ok := d.Fields(n, path, historyFields(&h))
	switch {
	case !ok || d.Failures() > mark:
	case given["file"] == nil:
		d.Errorf(n, path, "give file, where the checks' kept results are saved")
	case !d.Offline():
		if st, err := os.Stat(filepath.Dir(h.File)); err != nil {
			d.Errorf(given["file"], path+".file", "its directory: %v", err)
		} else if !st.IsDir() {
			d.Errorf(given["file"], path+".file", "%s is not a directory", filepath.Dir(h.File))
		}
	}
	return h
}
