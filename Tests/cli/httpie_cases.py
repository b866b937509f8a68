"""httpie's request items and what httpie sends for them: the table test_cli.py runs
netlayer on (against the test server's /echo) to show that it sends the same.

The expected values were recorded from httpie 3.2.4 (`pip install httpie`), with
`http --offline --ignore-stdin --print=B POST http://example.invalid/ ITEM...` (bodies;
`-f` for forms), and `--print=H GET` (headers, the query of the request line); the
inputs of JSON_CASES and JSON_ERRORS include httpie's own tests/test_json.py tables.
With NETLAYER_TEST_HTTPIE naming httpie's `http` program, test_cli.py runs it on
every case too and checks that it still sends what is recorded here.

Items name the files in FILES (written into the folder the commands run in).
HEADER_CASES: each header the items name, lower case, with the value sent, or None
when it is not sent. httpie sends a repeated header as one line per value; netlayer
joins them into one line (", ", for Cookie "; "), which RFC 9110 section 5.3 makes
the same field: the recorded value is httpie's lines joined that way.
"""

FILES = {
    "text.txt": "A text file\nwith two lines\n",
    "line.txt": "token-123\n\n",
    "data.json": '{"name": "httpie", "stars": 54000}',
}

JSON_CASES = [
    # the example, then httpie's documentation (https://httpie.io/docs/cli/nested-json)
    (['user[name]=ann', 'user[langs][]=en', 'user[langs][]=fr'],
     {'user': {'name': 'ann', 'langs': ['en', 'fr']}}),
    (['category=tools', 'search[type]=id', 'search[id]:=1'],
     {'category': 'tools', 'search': {'type': 'id', 'id': 1}}),
    (['category=tools', 'search[type]=keyword', 'search[keywords][]=APIs', 'search[keywords][]=CLI'],
     {'category': 'tools', 'search': {'type': 'keyword', 'keywords': ['APIs', 'CLI']}}),
    (['category=tools', 'search[type]=keyword', 'search[keywords][1]=APIs', 'search[keywords][0]=CLI'],
     {'category': 'tools', 'search': {'type': 'keyword', 'keywords': ['CLI', 'APIs']}}),
    (['category=tools', 'search[type]=platforms', 'search[platforms][]=Terminal',
      'search[platforms][1]=Desktop', 'search[platforms][3]=Mobile'],
     {'category': 'tools',
      'search': {'type': 'platforms', 'platforms': ['Terminal', 'Desktop', None, 'Mobile']}}),
    (['category=tools', 'search[type]=platforms', 'search[platforms]:=["Terminal", "Desktop"]',
      'search[platforms][]=Web', 'search[platforms][]=Mobile'],
     {'category': 'tools',
      'search': {'type': 'platforms', 'platforms': ['Terminal', 'Desktop', 'Web', 'Mobile']}}),
    (['shallow=value', 'object[key]=value', 'array[]:=1', 'array[1]:=2', 'array[2]:=3',
      'very[nested][json][3][httpie][power][]=Amaze'],
     {'shallow': 'value',
      'object': {'key': 'value'},
      'array': [1, 2, 3],
      'very': {'nested': {'json': [None, None, None, {'httpie': {'power': ['Amaze']}}]}}}),
    (['[]:=1', '[]:=2', '[]:=3'],
     [1, 2, 3]),
    (['[0][type]=platform', '[0][name]=terminal', '[1][type]=platform', '[1][name]=desktop'],
     [{'type': 'platform', 'name': 'terminal'}, {'type': 'platform', 'name': 'desktop'}]),
    ([r"foo\[bar\]:=1", r"baz[\[]:=2", r"baz[\]]:=3"],
     {'foo[bar]': 1, 'baz': {'[': 2, ']': 3}}),
    ([r"backslash[\\]:=1"],
     {'backslash': {'\\': 1}}),
    ([r"object[\1]=stringified", r"object[\100]=same", 'array[1]=indexified'],
     {'object': {'1': 'stringified', '100': 'same'}, 'array': [None, 'indexified']}),
    # a value replaces what was there; repeated plain keys keep the last value (httpie 3 makes no list)
    (['user[name]:=411', 'user[name]=string'],
     {'user': {'name': 'string'}}),
    (['a=1', 'a=2'],
     {'a': '2'}),
    (['a=1', 'b=2', 'a:=3'],
     {'a': 3, 'b': '2'}),
    (['a[]=1', 'a=2'],
     {'a': '2'}),
    # httpie's tests/test_json.py, test_nested_json_syntax
    (['bottle-on-wall[]:=1', 'bottle-on-wall[]:=2', 'bottle-on-wall[]:=3'],
     {'bottle-on-wall': [1, 2, 3]}),
    (['pet[species]=Dahut', 'pet[name]:="Hypatia"', 'kids[1]=Thelma', 'kids[0]:="Ashley"'],
     {'pet': {'species': 'Dahut', 'name': 'Hypatia'}, 'kids': ['Ashley', 'Thelma']}),
    (['pet[0][species]=Dahut', 'pet[0][name]=Hypatia', 'pet[1][species]=Felis Stultus',
      'pet[1][name]:="Billie"'],
     {'pet': [{'species': 'Dahut', 'name': 'Hypatia'}, {'species': 'Felis Stultus', 'name': 'Billie'}]}),
    (['wow[such][deep][3][much][power][!]=Amaze'],
     {'wow': {'such': {'deep': [None, None, None, {'much': {'power': {'!': 'Amaze'}}}]}}}),
    (['mix[]=scalar', 'mix[2]=something', 'mix[4]:="something 2"'],
     {'mix': ['scalar', None, 'something', None, 'something 2']}),
    (['highlander[]=one'],
     {'highlander': ['one']}),
    (['error[good]=BOOM!', 'error\\[bad:="BOOM BOOM!"'],
     {'error': {'good': 'BOOM!'}, 'error[bad': 'BOOM BOOM!'}),
    (['special[]:=true', 'special[]:=false', 'special[]:="true"', 'special[]:=null'],
     {'special': [True, False, 'true', None]}),
    ([r"\[\]:=1", r"escape\[d\]:=1", r"escaped\[\]:=1", r"e\[s\][c][a][p][\[ed\]][]:=1"],
     {'[]': 1, 'escape[d]': 1, 'escaped[]': 1, 'e[s]': {'c': {'a': {'p': {'[ed]': [1]}}}}}),
    (['[]:=1', '[]=foo'],
     [1, 'foo']),
    ([r"\]:=1", r"\[\]1:=1", r"\[1\]\]:=1"],
     {']': 1, '[]1': 1, '[1]]': 1}),
    ([r"foo\[bar\][baz]:=1", r"foo\[bar\]\[baz\]:=3", r"foo[bar][\[baz\]]:=4"],
     {'foo[bar]': {'baz': 1}, 'foo[bar][baz]': 3, 'foo': {'bar': {'[baz]': 4}}}),
    (['key[]:=1', 'key[][]:=2', 'key[][][]:=3', 'key[][][]:=4'],
     {'key': [1, [2], [[3]], [[4]]]}),
    (['x[0]:=1', 'x[]:=2', 'x[]:=3', 'x[][]:=4', 'x[][]:=5'],
     {'x': [1, 2, 3, [4], [5]]}),
    (['x=@text.txt', 'y[z]=@text.txt', 'q[u][]:=@data.json'],
     {'x': 'A text file\nwith two lines\n',
      'y': {'z': 'A text file\nwith two lines\n'},
      'q': {'u': [{'name': 'httpie', 'stars': 54000}]}}),
    (['foo[bar][5][]:=5', 'foo[bar][]:=6', 'foo[bar][][]:=7', 'foo[bar][][x]=dfasfdas',
      'foo[baz]:=[1, 2, 3]', 'foo[baz][]:=4'],
     {'foo': {'bar': [None, None, None, None, None, [5], 6, [7], {'x': 'dfasfdas'}], 'baz': [1, 2, 3, 4]}}),
    (['foo[]:=1', 'foo[]:=2', 'foo[][key]=value', 'foo[2][key 2]=value 2', r"foo[2][key \[]=value 3",
      r"bar[nesting][under][!][empty][?][\\key]:=4"],
     {'foo': [1, 2, {'key': 'value', 'key 2': 'value 2', 'key [': 'value 3'}],
      'bar': {'nesting': {'under': {'!': {'empty': {'?': {'\\key': 4}}}}}}}),
    # (httpie's case also has the item baz\[\]:3: a header whose name is no RFC 9110 token,
    # which netlayer refuses)
    ([r"foo\[key\]:=1", r"bar\[1\]:=2", r"quux[key\[escape\]]:=4",
      r"quux[key 2][\\][\\\\][\\\[\]\\\]\\\[\n\\]:=5"],
     {'foo[key]': 1,
      'bar[1]': 2,
      'quux': {'key[escape]': 4, 'key 2': {'\\': {'\\\\': {'\\[]\\]\\[\\n\\': 5}}}}}),
    ([r"A[B\\]=C", r"A[B\\\\]=C", r"A[\B\\]=C"],
     {'A': {'B\\': 'C', 'B\\\\': 'C', '\\B\\': 'C'}}),
    (['name=python', 'version:=3', 'date[year]:=2021', 'date[month]=December', 'systems[]=Linux',
      'systems[]=Mac', 'systems[]=Windows', 'people[known_ids][1]:=1000', 'people[known_ids][5]:=5000'],
     {'name': 'python',
      'version': 3,
      'date': {'year': 2021, 'month': 'December'},
      'systems': ['Linux', 'Mac', 'Windows'],
      'people': {'known_ids': [None, 1000, None, None, None, 5000]}}),
    ([r"foo[\1][type]=migration", r"foo[\2][type]=migration", r"foo[\dates]:=[2012, 2013]",
      r"foo[\dates][0]:=2014", r"foo[\2012 bleh]:=2013", r"foo[bleh \2012]:=2014", r"\2012[x]:=2",
      r"\2012[\[3\]]:=4"],
     {'foo': {'1': {'type': 'migration'},
              '2': {'type': 'migration'},
              '\\dates': [2014, 2013],
              '\\2012 bleh': 2013,
              'bleh \\2012': 2014},
      '2012': {'x': 2, '[3]': 4}}),
    ([r"a[\0]:=0", r"a[\\1]:=1", r"a[\\\2]:=2", r"a[\\\\\3]:=3", r"a[-1\\]:=-1", r"a[-2\\\\]:=-2",
      r"a[\\-3\\\\]:=-3"],
     {'a': {'0': 0, '\\1': 1, '\\\\2': 2, '\\\\\\3': 3, '-1\\': -1, '-2\\\\': -2, '\\-3\\\\': -3}}),
    (['[]:=0', '[]:=1', '[5]:=5', '[]:=6', '[9]:=9'],
     [0, 1, None, None, None, 5, 6, None, None, 9]),
    (['=empty', 'foo=bar', 'bar[baz][quux]=tuut'],
     {'': 'empty', 'foo': 'bar', 'bar': {'baz': {'quux': 'tuut'}}}),
    ([r"\1=top level int", r"\\1=escaped top level int", r"\2[\3][\4]:=5"],
     {'1': 'top level int', '\\1': 'escaped top level int', '2': {'3': {'4': 5}}}),
    ([':={"foo": {"bar": "baz"}}', 'top=val'],
     {'': {'foo': {'bar': 'baz'}}, 'top': 'val'}),
    (['[][a][b][]:=1', '[0][a][b][]:=2', '[][]:=2'],
     [{'a': {'b': [1, 2]}}, [2]]),
    ([':=[1,2,3]'],
     {'': [1, 2, 3]}),
    ([':=[1,2,3]', 'foo=bar'],
     {'': [1, 2, 3], 'foo': 'bar'}),
    (['test[0]:=1', 'test[100]:=1'],
     {"test": [1] + [None] * 99 + [1]}),
    # numbers are what Python's int() reads: spaces, a sign, _ between digits; a number at the top
    # level is a key, as int() prints it
    (['a[ 1 ]=x', 'b[1_0]=y', '01=z', '+2=w', '--', '-0=v', '-1=u'],
     {'a': [None, 'x'],
      'b': [None, None, None, None, None, None, None, None, None, None, 'y'],
      '1': 'z',
      '2': 'w',
      '0': 'v',
      '-1': 'u'}),
    # item escapes: \= \: \@ \; are text, in the name and in the value
    ([r"a\=b=c", r"d=e\=f", r"g\:h=i\@j", r"k\;l=m"],
     {'a=b': 'c', 'd': 'e=f', 'g:h': 'i@j', 'k;l': 'm'}),
]

# httpie's tests/test_json.py, test_nested_json_errors: refused (exit 2), naming the last item
# except where the refused item is given (the second member)
JSON_ERRORS = [
    ['A[:=1'],
    ['A[1:=1'],
    ['A[text:=1'],
    ['A[text][:=1'],
    (['A[key]=value', 'B[something]=u', 'A[text][:=1', 'C[key]=value'], 'A[text][:=1'),
    ['A[text]1:=1'],
    [r"A\[]:=1"],
    [r"A[something\]:=1"],
    [r"foo\[bar\]\\[   bleh:=1"],
    [r"foo\[bar\]\\[   bleh   :=1"],
    ['foo[bar][1]][]:=2'],
    ['foo[bar][1]something[]:=2'],
    ['foo[bar][1][142241[]:=2'],
    [r"foo[bar][1]\[142241[]:=2"],
    ['foo=1', 'foo[key]:=2'],
    ['foo=1', 'foo[0]:=2'],
    ['foo=1', 'foo[]:=2'],
    ['data[key]=value', 'data[key 2]=value 2', 'data[0]=value'],
    ['data[key]=value', 'data[key 2]=value 2', 'data[]=value'],
    ['foo[bar][baz][5]:=[1,2,3]', 'foo[bar][baz][5][]:=4', 'foo[bar][baz][key][]:=5'],
    ['foo[-10]:=[1,2]'],
    ['foo[0]:=1', 'foo[]:=2', r"foo[\2]:=3"],
    [r"foo[\1]:=2", 'foo[5]:=3'],
    ['x=y', '[]:=2'],
    ['[]:=2', 'x=y'],
    [':=[1,2,3]', '[]:=4'],
    ['[]:=4', ':=[1,2,3]'],
]

FORM_CASES = [
    (['a=1', 'a=2'],
     [('a', '1'), ('a', '2')]),
    (['a=1', 'b=2', 'a=3'],
     [('a', '1'), ('a', '3'), ('b', '2')]),
    (['a[b]=1', r"a\b=2", '[]=3'],
     [('a[b]', '1'), ('a\\b', '2'), ('[]', '3')]),
    (['=empty', 'x=@text.txt'],
     [('', 'empty'), ('x', 'A text file\nwith two lines\n')]),
    (['n:=2021', 's:="text"'],
     [('n', '2021'), ('s', 'text')]),
]

FORM_ERRORS = [
    ['a:=[1,2]'],
    ['a:={}'],
    ['a:=null'],
]

HEADER_CASES = [
    (['X-Empty;'], {'x-empty': ''}),
    (['X-A:1', 'X-A:2'], {'x-a': '1, 2'}),
    (['Cookie:a=1', 'Cookie:b=2'], {'cookie': 'a=1; b=2'}),
    (['User-Agent:', 'Accept-Encoding:', 'X-Gone:'],
     {'user-agent': None, 'accept-encoding': None, 'x-gone': None}),
    (['X-B:1', 'X-B:'], {'x-b': None}),
    (['X-C:', 'X-C:2'], {'x-c': '2'}),
    (['X-D;', 'X-D:x'], {'x-d': 'x'}),
    (['X-File:@line.txt'], {'x-file': 'token-123'}),
]

QUERY_CASES = [
    (['q==1', 'q==2', 'r==x y'], [('q', '1'), ('q', '2'), ('r', 'x y')]),
    (['==v'], [('', 'v')]),
    ([r"k\\==v", r"a\===b"], [('k\\\\', 'v'), ('a=', 'b')]),
    (['q==@line.txt'], [('q', 'token-123')]),
]

