import { runIndexUpdateBench } from './indexUpdate';
runIndexUpdateBench(Number(process.argv[2] ?? 12500)).then((r) => console.log(JSON.stringify(r)));
