package geminitest

import "github.com/toolnexus/toolnexus-go/internal/fake"

// File is a file the server holds, uploaded through the Files API (genai's
// client.Files.Upload speaks to the server as to the API): its resource
// name ("files/{id}"), its URI (what a fileData part names), display name,
// type, size, bytes, and create, update and expire times (48 hours after
// the upload, FileLifetime).
type File = fake.File

// The Files API's methods, as [Request].Method names them.
const (
	MethodUploadFile = fake.MethodUploadFile
	MethodGetFile    = fake.MethodGetFile
	MethodListFiles  = fake.MethodListFiles
	MethodDeleteFile = fake.MethodDeleteFile
)

// FileLifetime is how long the server keeps an uploaded file, as the API
// does: 48 hours.
const FileLifetime = fake.FileLifetime

// Files returns the files the server holds that have not expired at the
// server's time (see [Server.AdvanceTime]), oldest first: a test checks
// what its code uploaded, and how often. A generateContent that names a
// file the server does not hold, or that expired, is refused 403 as the
// API refuses it.
func (s *Server) Files() []File { return s.srv.Files() }
