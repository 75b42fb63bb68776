// Package deploy holds no code: the folder is the deployment (Dockerfiles,
// compose files, env examples, scripts), and its test checks, without Docker,
// that each env example documents every variable of its compose file with the
// compose file's default. The tests that run the images on the Docker engine
// are deploy/e2e, a module of its own (make e2e).
package deploy
