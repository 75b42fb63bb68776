// Package deploy holds no code: the folder is the deployment (Dockerfiles,
// compose files, env examples, scripts), and its tests check, without Docker,
// that each env example documents every variable of its compose file with the
// compose file's default, and that make up-auth waits for the health of every
// service of its project. The tests that run the images on the Docker engine
// are deploy/e2e, a module of its own (make e2e).
package deploy
