// Package dist coordinates the processes of a multi-process pipeline: one process per
// rank, each owning one contiguous stage of a split model.
//
// Rank 0 listens on the coordinator address and the other ranks dial it, retrying
// until a connect deadline. Every rank sends a Hello (protocol version, world size,
// its rank, the model file's size and header hash, its device); rank 0 checks that
// they agree, asks its setup function for the plan and an opaque blob (the NCCL
// unique id), and sends them back in a Welcome. After that the connections carry
// rank 0's commands, results for rank 0, and heartbeats: a rank that dies, hangs or
// never connects makes every other rank fail with one clear error within a bounded
// time, and cancelling rank 0's context stops every rank.
//
// The hidden state itself moves through a Transport between neighbouring ranks: a
// TCP (or in-memory) one here for tests and CPU ranks, NCCL (backend/nccl) on GPUs.
package dist
