import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
const db = await PGlite.create({ extensions: { vector } });
const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 4 });
await server.start();
const port = server.getServerConn().split(':')[1];
const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
await c.connect();
await c.query('create extension if not exists vector');
const D=+process.argv[2], N=+process.argv[3];
await c.query(`create table v (hash bytea primary key, e halfvec(${D}))`);
await c.query(`set maintenance_work_mem = '1GB'`);
function half(v){ const b=Buffer.alloc(4+2*v.length); b.writeInt16BE(v.length,0); for(let i=0;i<v.length;i++){ b.writeUInt16BE(toHalf(v[i]),4+2*i);} return b;}
const f32=new Float32Array(1), u32=new Uint32Array(f32.buffer);
function toHalf(x){ f32[0]=x; const u=u32[0]; const s=(u>>>16)&0x8000; let e=((u>>>23)&0xff)-127+15; let m=u&0x7fffff; if(e<=0) return s; if(e>=31) return s|0x7c00; return s|(e<<10)|(m>>>13);} 
let t=Date.now();
for (let b=0;b<N;b+=500){
  const params=[], rows=[];
  for(let i=b;i<Math.min(N,b+500);i++){ const h=Buffer.alloc(16); h.writeUInt32BE(i); const v=Array.from({length:D},(_,j)=>Math.sin(i*(j+1)*0.001+j)); params.push(h, half(v)); rows.push(`($${params.length-1},$${params.length})`); }
  await c.query({text:`insert into v values ${rows.join(',')} on conflict do nothing`, values: params});
}
console.log('insert', Date.now()-t);
t=Date.now();
const r = await c.query({ text: 'select hash, halfvec_send(e) as e from v' });
console.log('select send', Date.now()-t, r.rows.length, r.rows[0].e.length, r.rows[0].e.subarray(0,8));
t=Date.now();
const hs = r.rows.slice(0,2000).map(x=>x.hash);
const r3 = await c.query({ text: 'select hash, halfvec_send(e) as e from v where hash = any($1)', values:[hs] });
console.log('select 2000 by hash', Date.now()-t, r3.rows.length);
if (process.argv[4]) { t=Date.now();
await c.query(`create index on v using hnsw (e halfvec_cosine_ops) with (m=16, ef_construction=${process.argv[4]})`);
console.log('hnsw', Date.now()-t); }
await c.end(); await server.stop(); await db.close();
