// The FetcherService module.
