// The FetcherTesting module.
