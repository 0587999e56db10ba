/*
 * ts-ticket-office-service: ticket offices (agencies selling tickets in person) by
 * province, city and region. Express on port 16108, MongoDB on ts-ticket-office-mongo.
 */
var express = require('express');
var bodyParser = require('body-parser');
var fs = require('fs');
var path = require('path');
var office = require('./office');

var DB_CONN_STR = 'mongodb://ts-ticket-office-mongo:27017/ts';
var PORT = 16108;

var app = express();
app.use(bodyParser.json({ limit: '100kb' }));

function sendJson(res, result) {
    res.set({ 'Content-Type': 'application/json', 'Encoding': 'utf8' });
    res.json(result);
}

// GET /office/getRegionList: the province > city > region tree, read from region.json.
function getRegionList(req, res) {
    fs.readFile(path.join(__dirname, 'region.json'), 'utf8', function (err, data) {
        if (err) {
            res.status(500).json({ status: 0, msg: 'region list unavailable' });
            return;
        }
        sendJson(res, JSON.parse(data));
    });
}

// GET /office/getAll: every region document with its offices.
function getAll(req, res) {
    office.getAll(function (err, result) {
        if (err) {
            res.status(503).json({ status: 0, msg: 'database unavailable' });
            return;
        }
        sendJson(res, result);
    });
}

// POST /office/getSpecificOffices {province, city, region}
function getSpecificOffices(req, res) {
    var b = req.body || {};
    if (!b.province || !b.city || !b.region) {
        res.status(400).json({ status: 0, msg: 'province, city and region are required' });
        return;
    }
    office.getSpecificOffices(b.province, b.city, b.region, function (err, result) {
        if (err) {
            res.status(503).json({ status: 0, msg: 'database unavailable' });
            return;
        }
        sendJson(res, result);
    });
}

// POST /office/addOffice {province, city, region, office: {officeName, address, workTime, windowNum}}
function addOffice(req, res) {
    var b = req.body || {};
    var problem = office.validateOffice(b.office);
    if (!b.province || !b.city || !b.region || problem) {
        res.status(400).json({ status: 0, msg: problem || 'province, city and region are required' });
        return;
    }
    office.addOffice(b.province, b.city, b.region, b.office, function (err, result) {
        if (err) {
            res.status(err.status || 503).json({ status: 0, msg: err.message });
            return;
        }
        sendJson(res, result);
    });
}

// POST /office/deleteOffice {province, city, region, officeName}
function deleteOffice(req, res) {
    var b = req.body || {};
    office.deleteOffice(b.province, b.city, b.region, b.officeName, function (err, result) {
        if (err) {
            res.status(err.status || 503).json({ status: 0, msg: err.message });
            return;
        }
        sendJson(res, result);
    });
}

var router = express.Router();
router.get('/', function (req, res) { res.send('welcome to ts-ticket-office-service'); });
router.get('/getRegionList', getRegionList);
router.get('/getAll', getAll);
router.post('/getSpecificOffices', getSpecificOffices);
router.post('/addOffice', addOffice);
router.post('/deleteOffice', deleteOffice);
app.use('/office', router);

office.connect(DB_CONN_STR, function (err) {
    if (err) {
        console.error('cannot connect to ' + DB_CONN_STR + ': ' + err.message);
        process.exit(1);
    }
    app.listen(PORT, function () {
        console.log('ts-ticket-office-service listening on ' + PORT);
    });
});

module.exports = app;
