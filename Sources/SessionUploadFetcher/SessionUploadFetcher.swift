// The SessionUploadFetcher module: resumable (chunked) uploads.
