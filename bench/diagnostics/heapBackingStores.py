# Diagnostic (docs/benchmarks.md): the largest ArrayBuffer backing stores of a V8 heap snapshot and what holds each.
# python3 bench/diagnostics/heapBackingStores.py <file.heapsnapshot> [how many]
import json,sys,collections
d=json.load(open(sys.argv[1]))
m=d['snapshot']['meta']; nf=m['node_fields']; ef=m['edge_fields']; nt=m['node_types'][0]; et=m['edge_types'][0]
N=len(nf); E=len(ef); nodes=d['nodes']; edges=d['edges']; S=d['strings']
iT,iN,iId,iSz,iEc=nf.index('type'),nf.index('name'),nf.index('id'),nf.index('self_size'),nf.index('edge_count')
eT,eN,eTo=ef.index('type'),ef.index('name_or_index'),ef.index('to_node')
count=len(nodes)//N
first=[0]*(count+1)
for i in range(count): first[i+1]=first[i]+nodes[i*N+iEc]
ret=collections.defaultdict(list)
for i in range(count):
    for e in range(first[i],first[i+1]):
        b=e*E; t=et[edges[b+eT]]
        if t=='weak': continue
        to=edges[b+eTo]//N
        name=S[edges[b+eN]] if t in ('context','property','internal','shortcut') else str(edges[b+eN])
        ret[to].append((i,t,name))
def desc(i): return f"{nt[nodes[i*N+iT]]}:{S[nodes[i*N+iN]][:60]}"
big=[]
for i in range(count):
    if 'ArrayBufferData' in S[nodes[i*N+iN]] or (nt[nodes[i*N+iT]]=='native' and nodes[i*N+iSz]>=256*1024):
        big.append((nodes[i*N+iSz],i))
big.sort(reverse=True)
print('total backing', sum(s for s,_ in big)/2**20, 'MB in', len(big))
for sz,i in big[:int(sys.argv[2]) if len(sys.argv)>2 else 8]:
    print(f"\n{sz/2**20:.2f} MB {desc(i)}")
    x=i; seen={i}
    for depth in range(12):
        rs=[r for r in ret[x] if r[0] not in seen]
        if not rs: break
        # prefer non-system retainers
        rs.sort(key=lambda r:(nt[nodes[r[0]*N+iT]] in ('hidden','synthetic'), r[1]=='internal'))
        p,t,name=rs[0]; seen.add(p)
        print(f"   <-[{t} {name[:40]}]- {desc(p)}")
        x=p
