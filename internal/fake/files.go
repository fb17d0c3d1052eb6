package fake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"
)

// This file serves the Gemini API's Files API (see the package
// documentation, "Files"): the resumable upload genai's Files.Upload
// speaks, files.get, files.list and files.delete, and the files a
// generateContent names in fileData parts. The facts and their sources
// are the rules of fileRules below and the rule "file-data" of rules
// (validate.go).

// The Files API's methods.
const (
	// MethodUploadFile is POST /upload/v1beta/files: the start of a
	// resumable upload, and each of its chunks.
	MethodUploadFile Method = "media.upload"
	// MethodGetFile is GET /v1beta/files/{id}.
	MethodGetFile Method = "files.get"
	// MethodListFiles is GET /v1beta/files.
	MethodListFiles Method = "files.list"
	// MethodDeleteFile is DELETE /v1beta/files/{id}.
	MethodDeleteFile Method = "files.delete"
)

// FileLifetime is how long the Files API keeps a file: 48 hours from its
// upload (https://ai.google.dev/gemini-api/docs/files: "Files are stored
// for 48 hours"); then it is gone, as after a delete.
const FileLifetime = 48 * time.Hour

// MaxFileSize is the largest file the Files API takes: 2 GB
// (https://ai.google.dev/gemini-api/docs/files).
const MaxFileSize = 2 << 30

// FileHost is the host of the URIs the server gives its files, the real
// API's: a file's uri is https://generativelanguage.googleapis.com/v1beta/files/{id}.
const FileHost = "generativelanguage.googleapis.com"

// The routes of the Files API, on the Gemini API only (genai refuses
// Files on Vertex AI before sending anything: files.go:613, 271).
var (
	uploadRoute = regexp.MustCompile(`^/upload/(v1beta|v1alpha)/files$`)
	filesRoute  = regexp.MustCompile(`^/(v1beta|v1alpha)/files(?:/([^/:]+))?$`)
	// fileURI matches a Files API file's URI, of any host: its id.
	fileURI = regexp.MustCompile(`^https?://[^/]+/(?:v1beta|v1alpha|v1)/files/([^/?#]+)$`)
	// fileID is what a requested file name may hold after "files/".
	fileID = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
)

// UploadChunkGranularity is what the server says every chunk but the last
// must be a multiple of (X-Goog-Upload-Chunk-Granularity, the resumable
// protocol's header); genai sends 8 MiB chunks (api_client.go:38).
const UploadChunkGranularity = 256 << 10

// File is a file the server holds, as [Server.Files] reports it.
type File struct {
	// Name is the resource name, "files/{id}"; URI the file's uri, what a
	// fileData part names.
	Name, URI   string
	DisplayName string
	MIMEType    string
	Size        int64
	// Data is the file's bytes.
	Data                               []byte
	CreateTime, UpdateTime, ExpireTime time.Time
}

// storedFile is a file the server holds.
type storedFile struct {
	id, displayName, mimeType string
	data                      []byte
	created, expires          time.Time
	seq                       int
}

// uploadSession is a resumable upload in progress.
type uploadSession struct {
	id       string
	name     string // a requested "files/{id}", or ""
	display  string
	mimeType string
	declared int64 // X-Goog-Upload-Header-Content-Length, or -1
	received []byte
}

// wireFileMeta is the body of an upload's start: {"file": {…}}, the
// fields a client may set (google.ai.generativelanguage.v1beta.File;
// genai files.go:615-626).
type wireFileMeta struct {
	File *struct {
		Name        string `json:"name,omitempty"`
		DisplayName string `json:"displayName,omitempty"`
		MIMEType    string `json:"mimeType,omitempty"`
	} `json:"file,omitempty"`
}

// parseFilesRoute returns the Files API route of a request, the file id
// it names, and false when it names none.
func parseFilesRoute(method string, u *url.URL) (route, string, bool) {
	path := slashes.ReplaceAllString(u.Path, "/")
	if m := uploadRoute.FindStringSubmatch(path); m != nil && method == http.MethodPost {
		return route{backend: genai.BackendGeminiAPI, version: m[1], method: MethodUploadFile}, "", true
	}
	m := filesRoute.FindStringSubmatch(path)
	if m == nil {
		return route{}, "", false
	}
	r, id := route{backend: genai.BackendGeminiAPI, version: m[1]}, m[2]
	switch {
	case id == "" && method == http.MethodGet:
		r.method = MethodListFiles
	case id != "" && method == http.MethodGet:
		r.method = MethodGetFile
	case id != "" && method == http.MethodDelete:
		r.method = MethodDeleteFile
	default:
		return route{}, "", false
	}
	return r, id, true
}

// fileRules are the checks of the Files API's requests, as [rules] are
// generateContent's: each says what backs it.
var fileRules = []rule{
	rules[0], // auth
	{name: "upload-protocol", check: checkUploadProtocol,
		verified: "genai's Files.Upload starts a resumable upload, POST /upload/v1beta/files with " +
			"X-Goog-Upload-Protocol: resumable, X-Goog-Upload-Command: start, X-Goog-Upload-Header-Content-Type and a " +
			"JSON body {\"file\": {…}}, reads the session's URL from the X-Goog-Upload-URL header of the answer, then " +
			"POSTs the bytes there in 8 MiB chunks, each with X-Goog-Upload-Offset and X-Goog-Upload-Command " +
			"\"upload\" (\"upload, finalize\" for the last), and needs X-Goog-Upload-Status on each answer: \"active\" " +
			"until the last, \"final\" with {\"file\": {…}} on it (genai v1.77.0 files.go:612-660, api_client.go:660-767; " +
			"the same exchange in the Gemini API's REST guide, ai.google.dev/gemini-api/docs/files, which sends " +
			"X-Goog-Upload-Header-Content-Length too, as UploadFromPath does, files.go:694).",
		assumed: "a chunk for an upload the server did not start is 404 NOT_FOUND, one whose offset is not the bytes " +
			"received so far 400 INVALID_ARGUMENT (the real upload server's refusals were not recorded); the " +
			"multipart and raw protocols, which genai does not use, are refused; a chunk that is not the last need " +
			"not be a multiple of the granularity."},
	{name: "json-fields", check: checkUploadFields,
		verified: "the start's body is {\"file\": File}, of which a client sets name, displayName and mimeType " +
			"(ai.google.dev/api/files, media.upload; genai files.go:615-626).",
		assumed: "an unknown field, or one of the wrong type, is refused as in generateContent's body; output-only " +
			"fields are refused too."},
	{name: "file-name", check: checkUploadName,
		verified: "a file's name is \"files/{id}\", generated when the upload sets none (genai files.go:625-629, " +
			"types.go File.Name: \"at most 40 characters, lowercase alphanumeric or dashes (-)\").",
		assumed: "a name taken by a live file is 409 ALREADY_EXISTS, and one that is not of that form 400, with these " +
			"texts."},
	{name: "file-size", check: checkUploadSize,
		verified: "a file is at most 2 GB (ai.google.dev/gemini-api/docs/files).",
		assumed: "the upload that passes it, or whose finished size differs from the X-Goog-Upload-Header-Content-" +
			"Length its start declared, is refused 400 INVALID_ARGUMENT with this text."},
	{name: "file-found", check: checkFileFound,
		verified: "a file that does not exist, was deleted or expired (48 hours after its upload) is 403 " +
			"PERMISSION_DENIED \"You do not have permission to access the File {id} or it may not exist.\", text " +
			"verified (google-gemini/deprecated-generative-ai-js#236 for files.get; googleapis/python-genai#1218; " +
			"the expiry: google-gemini/deprecated-generative-ai-python#692 and discuss.ai.google.dev topic 50428).",
		assumed: "files.delete answers the same."},
	{name: "files-list-page", check: checkFilesListPage,
		verified: "files.list takes pageSize (10 by default, 100 at most) and pageToken (ai.google.dev/api/files, " +
			"files.list).",
		assumed: "a pageSize over 100 is taken as 100; the texts for a pageSize that is not a number and a token the " +
			"server did not send."},
}

// checkFiles runs [fileRules] on in and returns the first failure, or nil.
func checkFiles(in *input) *Rejection {
	for _, r := range fileRules {
		if err := r.check(in); err != nil {
			return &Rejection{Rule: r.name, Err: *err}
		}
	}
	return nil
}

// fileNotFound is the Gemini API's answer for a file it does not hold.
func fileNotFound(id string) *APIError {
	return &APIError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED",
		Message: fmt.Sprintf("You do not have permission to access the File %s or it may not exist.", id)}
}

// starts reports whether in is the start of an upload.
func (in *input) starts() bool {
	return in.method == MethodUploadFile && in.query.Get("upload_id") == ""
}

func checkUploadProtocol(in *input) *APIError {
	if in.method != MethodUploadFile {
		return nil
	}
	command := strings.ToLower(strings.ReplaceAll(in.header.Get("X-Goog-Upload-Command"), " ", ""))
	if in.starts() {
		if p := in.header.Get("X-Goog-Upload-Protocol"); !strings.EqualFold(p, "resumable") || command != "start" {
			return invalidArgument(fmt.Sprintf("fake: only resumable uploads are served (X-Goog-Upload-Protocol: resumable, X-Goog-Upload-Command: start), not protocol %q, command %q", p, command))
		}
		return nil
	}
	in.upload = in.uploads(in.query.Get("upload_id"))
	if in.upload == nil {
		return &APIError{Code: http.StatusNotFound, Status: "NOT_FOUND", Message: "The upload session does not exist or has ended."}
	}
	switch command {
	case "upload", "upload,finalize", "finalize":
	default:
		return invalidArgument(fmt.Sprintf("Unknown X-Goog-Upload-Command %q.", in.header.Get("X-Goog-Upload-Command")))
	}
	in.finalize = strings.HasSuffix(command, "finalize")
	offset, err := strconv.ParseInt(in.header.Get("X-Goog-Upload-Offset"), 10, 64)
	if err != nil || offset != int64(len(in.upload.received)) {
		return invalidArgument(fmt.Sprintf("Invalid X-Goog-Upload-Offset %q: %d bytes were received.", in.header.Get("X-Goog-Upload-Offset"), len(in.upload.received)))
	}
	return nil
}

func checkUploadFields(in *input) *APIError {
	if !in.starts() || len(strings.TrimSpace(string(in.body))) == 0 {
		return nil
	}
	var meta wireFileMeta
	d := json.NewDecoder(strings.NewReader(string(in.body)))
	d.DisallowUnknownFields()
	if err := d.Decode(&meta); err != nil {
		return invalidArgument(fmt.Sprintf("Invalid JSON payload received. %v", err))
	}
	in.fileMeta = &meta
	return nil
}

func checkUploadName(in *input) *APIError {
	if !in.starts() || in.fileMeta == nil || in.fileMeta.File == nil || in.fileMeta.File.Name == "" {
		return nil
	}
	id, ok := strings.CutPrefix(in.fileMeta.File.Name, "files/")
	if !ok || !fileID.MatchString(id) {
		return invalidArgument(fmt.Sprintf("Invalid file name %q: it must be files/ then at most 40 lowercase letters, digits or dashes.", in.fileMeta.File.Name))
	}
	if in.files(id) != nil {
		return &APIError{Code: http.StatusConflict, Status: "ALREADY_EXISTS", Message: fmt.Sprintf("A file named files/%s already exists.", id)}
	}
	return nil
}

func checkUploadSize(in *input) *APIError {
	switch {
	case in.starts():
		if s := in.header.Get("X-Goog-Upload-Header-Content-Length"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 || n > MaxFileSize {
				return invalidArgument(fmt.Sprintf("Invalid X-Goog-Upload-Header-Content-Length %q: a file is at most %d bytes.", s, MaxFileSize))
			}
		}
	case in.method == MethodUploadFile:
		size := int64(len(in.upload.received) + len(in.body))
		if size > MaxFileSize {
			return invalidArgument(fmt.Sprintf("The file is larger than %d bytes.", MaxFileSize))
		}
		if in.finalize && in.upload.declared >= 0 && size != in.upload.declared {
			return invalidArgument(fmt.Sprintf("The upload finished at %d bytes; its start declared %d.", size, in.upload.declared))
		}
	}
	return nil
}

func checkFileFound(in *input) *APIError {
	if in.method != MethodGetFile && in.method != MethodDeleteFile {
		return nil
	}
	if in.files(in.fileID) == nil {
		return fileNotFound(in.fileID)
	}
	return nil
}

func checkFilesListPage(in *input) *APIError {
	if in.method != MethodListFiles {
		return nil
	}
	in.pageSize = 10
	if s := in.query.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return invalidArgument(fmt.Sprintf("Invalid value at 'page_size' (TYPE_INT32), %q", s))
		}
		if n > 0 {
			in.pageSize = min(n, 100)
		}
	}
	if tok := in.query.Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 {
			return invalidArgument("Invalid page token.")
		}
		in.pageOffset = n
	}
	return nil
}

// checkFileData is generateContent's rule "file-data" (validate.go): on
// the Gemini API, each fileData names a file by a URI the API reads: a
// Files API file the server holds, or an http(s) or gs:// URI.
func checkFileData(in *input) *APIError {
	if in.vertex() {
		return nil
	}
	check := func(uri string) *APIError {
		if m := fileURI.FindStringSubmatch(uri); m != nil {
			if in.files != nil && in.files(m[1]) == nil {
				return fileNotFound(m[1])
			}
			return nil
		}
		u, err := url.Parse(uri)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "gs") {
			return invalidArgument(fmt.Sprintf("Unsupported file uri: %s", uri))
		}
		return nil
	}
	contents := in.req.Contents
	if in.req.SystemInstruction != nil {
		contents = append(slices.Clip(contents), in.req.SystemInstruction)
	}
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if p.FileData != nil {
				if err := check(p.FileData.FileURI); err != nil {
					return err
				}
			}
			if p.FunctionResponse == nil {
				continue
			}
			for _, rp := range p.FunctionResponse.Parts {
				if rp != nil && rp.FileData != nil {
					if err := check(rp.FileData.FileURI); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// serveFiles answers a request of the Files API.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request, rt route, id string) {
	creds := credentialsOf(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req := Request{Header: r.Header.Clone(), Query: r.URL.Query(), APIKey: creds.apiKey, Token: creds.token,
		Method: rt.method, Backend: rt.backend, APIVersion: rt.version}
	in := &input{backend: rt.backend, version: rt.version, method: rt.method, creds: creds, body: body,
		query: req.Query, header: r.Header, fileID: id, now: s.timeNow().UTC(), files: s.lookupFile, uploads: s.lookupUpload}
	if in.starts() {
		req.Body = body // a chunk's bytes are not kept in the record
	}
	var rej *Rejection
	if err != nil {
		rej = &Rejection{Rule: "route", Err: *invalidArgument(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxBody))}
	} else {
		rej = checkFiles(in)
	}
	rec := &record{req: req}
	s.take(rec, rej, false, nil)
	if rej != nil {
		s.log("fake: #%d %s %s: rejected by rule %q: %d %s", rec.req.Seq, r.Method, r.URL.Path, rej.Rule, rej.Err.httpCode(), rej.Err.Message)
		writeError(w, in, &rej.Err)
		return
	}
	s.log("fake: #%d %s %s", rec.req.Seq, r.Method, r.URL.Path)
	switch rt.method {
	case MethodUploadFile:
		s.uploadFile(w, r, in)
	case MethodGetFile:
		if f := s.lookupFile(id); f != nil {
			writeJSON(w, http.StatusOK, mustJSON(f.wire()))
		} else {
			writeError(w, in, fileNotFound(id)) // expired since the rules looked
		}
	case MethodDeleteFile:
		s.mu.Lock()
		delete(s.files, id)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, []byte("{}"))
	case MethodListFiles:
		writeJSON(w, http.StatusOK, mustJSON(s.listFiles(in)))
	}
}

// uploadFile starts an upload, or takes one of its chunks.
func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request, in *input) {
	if in.starts() {
		u := &uploadSession{mimeType: in.header.Get("X-Goog-Upload-Header-Content-Type"), declared: -1}
		if meta := in.fileMeta; meta != nil && meta.File != nil {
			u.name, u.display = meta.File.Name, meta.File.DisplayName
			if u.mimeType == "" {
				u.mimeType = meta.File.MIMEType
			}
		}
		if n, err := strconv.ParseInt(in.header.Get("X-Goog-Upload-Header-Content-Length"), 10, 64); err == nil {
			u.declared = n
		}
		s.mu.Lock()
		s.fileSeq++
		u.id = fmt.Sprintf("fake-upload-%d", s.fileSeq)
		if s.uploads == nil {
			s.uploads = map[string]*uploadSession{}
		}
		s.uploads[u.id] = u
		s.mu.Unlock()
		w.Header().Set("X-Goog-Upload-URL", s.URL+"/upload/"+in.version+"/files?upload_id="+u.id+"&upload_protocol=resumable")
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.Header().Set("X-Goog-Upload-Chunk-Granularity", strconv.Itoa(UploadChunkGranularity))
		w.Header().Set("X-Goog-Upload-Control-URL", s.URL+"/upload/"+in.version+"/files?upload_id="+u.id+"&upload_protocol=resumable")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		return
	}
	u := in.upload
	s.mu.Lock()
	u.received = append(u.received, in.body...)
	if !in.finalize {
		s.mu.Unlock()
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.Header().Set("X-Goog-Upload-Size-Received", strconv.Itoa(len(u.received)))
		w.WriteHeader(http.StatusOK)
		return
	}
	delete(s.uploads, u.id)
	s.fileSeq++
	f := &storedFile{id: strings.TrimPrefix(u.name, "files/"), displayName: u.display, mimeType: u.mimeType, data: u.received,
		created: in.now, expires: in.now.Add(FileLifetime), seq: s.fileSeq}
	if f.id == "" {
		// Twelve lowercase letters and digits, as the API's ids are
		// ("3qswqtk02p7x"), unique within the server.
		id := strconv.FormatInt(int64(s.fileSeq)*7919+1000003, 36)
		f.id = strings.Repeat("0", max(0, 12-len(id))) + id
	}
	if f.mimeType == "" {
		f.mimeType = http.DetectContentType(f.data)
	}
	if s.files == nil {
		s.files = map[string]*storedFile{}
	}
	s.files[f.id] = f
	s.mu.Unlock()
	w.Header().Set("X-Goog-Upload-Status", "final")
	writeJSON(w, http.StatusOK, mustJSON(map[string]any{"file": f.wire()}))
}

// wire is the File resource's JSON, as the API sends it (genai
// types.go File).
func (f *storedFile) wire() map[string]any {
	sum := sha256.Sum256(f.data)
	m := map[string]any{
		"name":           "files/" + f.id,
		"mimeType":       f.mimeType,
		"sizeBytes":      strconv.Itoa(len(f.data)),
		"createTime":     f.created.Format(time.RFC3339Nano),
		"updateTime":     f.created.Format(time.RFC3339Nano),
		"expirationTime": f.expires.Format(time.RFC3339Nano),
		"sha256Hash":     base64.StdEncoding.EncodeToString(sum[:]),
		"uri":            "https://" + FileHost + "/v1beta/files/" + f.id,
		"state":          "ACTIVE",
		"source":         "UPLOADED",
	}
	if f.displayName != "" {
		m["displayName"] = f.displayName
	}
	return m
}

// listFiles answers files.list: the live files, newest first, a page at a
// time.
func (s *Server) listFiles(in *input) map[string]any {
	s.mu.Lock()
	var live []*storedFile
	for _, f := range s.files {
		if in.now.Before(f.expires) {
			live = append(live, f)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(live, func(a, b *storedFile) int { return b.seq - a.seq })
	out := map[string]any{}
	var page []map[string]any
	for i := in.pageOffset; i < len(live) && len(page) < in.pageSize; i++ {
		page = append(page, live[i].wire())
	}
	if len(page) > 0 {
		out["files"] = page
	}
	if next := in.pageOffset + len(page); next < len(live) {
		out["nextPageToken"] = strconv.Itoa(next)
	}
	return out
}

// lookupFile returns the live file id, or nil.
func (s *Server) lookupFile(id string) *storedFile {
	now := s.timeNow()
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[id]
	if f == nil || !now.Before(f.expires) {
		return nil
	}
	return f
}

// lookupUpload returns the upload in progress id, or nil.
func (s *Server) lookupUpload(id string) *uploadSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uploads[id]
}

// Files returns the files the server holds that have not expired, oldest
// first: what uploads made, for a test to check what was uploaded, how
// often, and what it held.
func (s *Server) Files() []File {
	now := s.timeNow()
	s.mu.Lock()
	var held []*storedFile
	for _, f := range s.files {
		if now.Before(f.expires) {
			held = append(held, f)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(held, func(a, b *storedFile) int { return a.seq - b.seq })
	out := make([]File, len(held))
	for i, f := range held {
		out[i] = File{Name: "files/" + f.id, URI: "https://" + FileHost + "/v1beta/files/" + f.id, DisplayName: f.displayName,
			MIMEType: f.mimeType, Size: int64(len(f.data)), Data: f.data, CreateTime: f.created, UpdateTime: f.created, ExpireTime: f.expires}
	}
	return out
}
