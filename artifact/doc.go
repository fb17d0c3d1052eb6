// Package artifact keeps the files an agent makes and reads (a chart, a
// CSV, a report, a user's PDF) beside the conversation: each save a new
// immutable version, with its content type, size, SHA-256 and time.
//
// # Stores
//
// A [Store] keeps files per user and per thread ([Key]; a thread "" holds
// the user's own files, which all their threads reach, named with
// [UserPrefix] elsewhere): [Memory] in the process, [Dir] in a directory,
// sqlitestore's and pgstore's Store.Artifacts in the session stores'
// databases, and any cloud object store (S3, GCS, Azure) through the
// module artifact/blobstore, so that the root module never requires a
// cloud SDK. Every store passes the contract of package artifacttest:
// versions from 1, a requested version read as asked, every change a
// version of its own, text byte for byte, concurrent saves of one name
// each a version and none lost, saves that are atomic (a reader never sees
// part of a file; a failed save keeps nothing), deletion of one version or
// all (a number is never given twice), per-user quotas
// (SaveOptions.MaxBytesPerUser), and names that could escape their folder
// refused ([CheckName]).
//
// # The model
//
// A [Keeper] is an agent.FileKeeper: as agent.Config.Files, it saves the
// media a tool returns (toolset.MediaOutput) as files of the run's thread
// ([WithScope] names it; agentserver sets it for every served run), so
// that the history, the run's events and its Result hold references
// ([URI]: "artifact:chart.png?version=2", a fileData part) rather than
// the bytes. Before each model call it resolves the references in the
// request: a file up to KeeperOptions.InlineLimit ([DefaultInlineLimit],
// 256 KiB) is sent inline, a larger one is uploaded with the Files API
// (KeeperOptions.Uploader: a client's Files) once per version and named by
// its URI, again when its upload nears its 48-hour expiry; a type the model
// cannot read ([ModelType]) and a file that was deleted become a sentence.
// [Keeper.KeepMessage] does the same for a user's inline files, and
// [Keeper.Tool] is load_artifacts, which lists and loads the thread's
// files on demand.
//
// See docs/artifacts.md for the routes that serve files, the protocols,
// and how this compares with ADK's artifact service.
package artifact
