// The benchmarks; written in the foundation issue.
console.log("no benchmarks yet");
