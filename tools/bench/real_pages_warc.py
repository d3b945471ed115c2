# The 150 real pages of tests/data/html/pages (their provenance: tests/data/README.md) as
# response records of one .warc.gz, REPS times over (each time under other host names):
#   python3 tools/bench/real_pages_warc.py REPS OUT.warc.gz      (needs warcio)
import os, gzip, sys
from io import BytesIO
from warcio.warcwriter import WARCWriter
from warcio.statusandheaders import StatusAndHeaders
src = os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'data', 'html', 'pages')
pages = []
for f in sorted(os.listdir(src)):
    b = open(os.path.join(src, f), 'rb').read()
    if f.endswith('.gz'): b = gzip.decompress(b)
    pages.append((f.split('.')[0], b))
reps = int(sys.argv[1])
with open(sys.argv[2], 'wb') as out:
    w = WARCWriter(out, gzip=True)
    for r in range(reps):
        for name, body in pages:
            h = StatusAndHeaders('200 OK', [('Content-Type', 'text/html; charset=utf-8'), ('Content-Length', str(len(body)))], protocol='HTTP/1.1')
            rec = w.create_warc_record(f'http://real{r}.test/{name}.html', 'response', payload=BytesIO(body), http_headers=h)
            w.write_record(rec)
