package pptx

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The fixed parts of a presentation: content types, package relationships,
// properties, the presentation part, one slide master with two layouts
// (title slide, title only) and a theme.

const xmlHeader = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

const nsDecl = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

const groupProps = `<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>`

// Relationship types.
const (
	relBase        = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
	relSlideLayout = relBase + "slideLayout"
	relImage       = relBase + "image"
	relHyperlink   = relBase + "hyperlink"
)

const ctBase = "application/vnd.openxmlformats-officedocument.presentationml."

func contentTypes(slides int, imgExts map[string]bool) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`)
	b.WriteString(`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>`)
	for _, e := range slices.Sorted(maps.Keys(imgExts)) {
		fmt.Fprintf(&b, `<Default Extension="%s" ContentType="image/%s"/>`, e, e)
	}
	over := func(part, ct string) { fmt.Fprintf(&b, `<Override PartName="%s" ContentType="%s"/>`, part, ct) }
	over("/ppt/presentation.xml", ctBase+"presentation.main+xml")
	over("/ppt/slideMasters/slideMaster1.xml", ctBase+"slideMaster+xml")
	over("/ppt/slideLayouts/slideLayout1.xml", ctBase+"slideLayout+xml")
	over("/ppt/slideLayouts/slideLayout2.xml", ctBase+"slideLayout+xml")
	for i := 1; i <= slides; i++ {
		over(fmt.Sprintf("/ppt/slides/slide%d.xml", i), ctBase+"slide+xml")
	}
	over("/ppt/theme/theme1.xml", "application/vnd.openxmlformats-officedocument.theme+xml")
	over("/ppt/presProps.xml", ctBase+"presProps+xml")
	over("/ppt/viewProps.xml", ctBase+"viewProps+xml")
	over("/ppt/tableStyles.xml", ctBase+"tableStyles+xml")
	over("/docProps/core.xml", "application/vnd.openxmlformats-package.core-properties+xml")
	over("/docProps/app.xml", "application/vnd.openxmlformats-officedocument.extended-properties+xml")
	b.WriteString(`</Types>`)
	return b.String()
}

const rootRels = xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
	`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="ppt/presentation.xml"/>` +
	`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
	`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>` +
	`</Relationships>`

func coreProps(title string, created time.Time) string {
	ts := created.UTC().Format("2006-01-02T15:04:05Z")
	return xmlHeader + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
		`<dc:title>` + esc(title) + `</dc:title><dc:creator>agentura composer-agent</dc:creator>` +
		`<dcterms:created xsi:type="dcterms:W3CDTF">` + ts + `</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">` + ts + `</dcterms:modified>` +
		`</cp:coreProperties>`
}

func appProps(slides int) string {
	return xmlHeader + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">` +
		`<Application>agentura composer-agent</Application><PresentationFormat>Widescreen</PresentationFormat>` +
		fmt.Sprintf(`<Slides>%d</Slides>`, slides) + `</Properties>`
}

func presentationXML(slides int) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<p:presentation ` + nsDecl + ` saveSubsetFonts="1">`)
	b.WriteString(`<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>`)
	for i := 1; i <= slides; i++ {
		fmt.Fprintf(&b, `<p:sldId id="%d" r:id="rId%d"/>`, 255+i, 4+i)
	}
	fmt.Fprintf(&b, `</p:sldIdLst><p:sldSz cx="%d" cy="%d"/><p:notesSz cx="6858000" cy="9144000"/>`, SlideWidth, SlideHeight)
	b.WriteString(`<p:defaultTextStyle><a:defPPr><a:defRPr lang="en-US"/></a:defPPr></p:defaultTextStyle></p:presentation>`)
	return b.String()
}

func presentationRels(slides int) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	b.WriteString(`<Relationship Id="rId1" Type="` + relBase + `slideMaster" Target="slideMasters/slideMaster1.xml"/>`)
	b.WriteString(`<Relationship Id="rId2" Type="` + relBase + `theme" Target="theme/theme1.xml"/>`)
	b.WriteString(`<Relationship Id="rId3" Type="` + relBase + `presProps" Target="presProps.xml"/>`)
	b.WriteString(`<Relationship Id="rId4" Type="` + relBase + `viewProps" Target="viewProps.xml"/>`)
	for i := 1; i <= slides; i++ {
		fmt.Fprintf(&b, `<Relationship Id="rId%d" Type="%sslide" Target="slides/slide%d.xml"/>`, 4+i, relBase, i)
	}
	fmt.Fprintf(&b, `<Relationship Id="rId%d" Type="%stableStyles" Target="tableStyles.xml"/>`, 5+slides, relBase)
	b.WriteString(`</Relationships>`)
	return b.String()
}

const presProps = xmlHeader + `<p:presentationPr ` + nsDecl + `/>`

const viewProps = xmlHeader + `<p:viewPr ` + nsDecl + `><p:normalViewPr><p:restoredLeft sz="15620"/><p:restoredTop sz="94660"/></p:normalViewPr><p:gridSpacing cx="76200" cy="76200"/></p:viewPr>`

const tableStyles = xmlHeader + `<a:tblStyleLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" def="{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}"/>`

// phShape is a placeholder shape of a master or layout.
func phShape(id int, name, ph string, x, y, w, h int) string {
	return fmt.Sprintf(`<p:sp><p:nvSpPr><p:cNvPr id="%d" name="%s"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph %s/></p:nvPr></p:nvSpPr>`+
		`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>`+
		`<p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-US"/></a:p></p:txBody></p:sp>`, id, name, ph, x, y, w, h)
}

func lvlPr(lvl int, size int, bullet bool) string {
	marL := 228600 + lvl*457200
	bu := `<a:buNone/>`
	if bullet {
		bu = `<a:buFont typeface="Arial"/><a:buChar char="•"/>`
	}
	return fmt.Sprintf(`<a:lvl%dpPr marL="%d" indent="-228600" algn="l"><a:spcBef><a:spcPts val="1000"/></a:spcBef>%s<a:defRPr sz="%d"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/><a:ea typeface="+mn-ea"/><a:cs typeface="+mn-cs"/></a:defRPr></a:lvl%dpPr>`,
		lvl+1, marL, bu, size, lvl+1)
}

var slideMasterXML = func() string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<p:sldMaster ` + nsDecl + `><p:cSld><p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg><p:spTree>` + groupProps)
	b.WriteString(phShape(2, "Title Placeholder 1", `type="title"`, marginX, titleY, bodyW, titleH))
	b.WriteString(phShape(3, "Text Placeholder 2", `type="body" idx="1"`, marginX, bodyY, bodyW, bodyH))
	b.WriteString(`</p:spTree></p:cSld>`)
	b.WriteString(`<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>`)
	b.WriteString(`<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/><p:sldLayoutId id="2147483650" r:id="rId2"/></p:sldLayoutIdLst>`)
	b.WriteString(`<p:txStyles><p:titleStyle><a:lvl1pPr algn="l"><a:spcBef><a:spcPct val="0"/></a:spcBef><a:buNone/><a:defRPr sz="3600" b="1"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mj-lt"/><a:ea typeface="+mj-ea"/><a:cs typeface="+mj-cs"/></a:defRPr></a:lvl1pPr></p:titleStyle>`)
	b.WriteString(`<p:bodyStyle>`)
	for l := range 9 {
		b.WriteString(lvlPr(l, max(2800-l*400, 1400), true))
	}
	b.WriteString(`</p:bodyStyle><p:otherStyle><a:defPPr><a:defRPr lang="en-US"/></a:defPPr>`)
	for l := range 9 {
		b.WriteString(lvlPr(l, 1800, false))
	}
	b.WriteString(`</p:otherStyle></p:txStyles></p:sldMaster>`)
	return b.String()
}()

const slideMasterRels = xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
	`<Relationship Id="rId1" Type="` + relSlideLayout + `" Target="../slideLayouts/slideLayout1.xml"/>` +
	`<Relationship Id="rId2" Type="` + relSlideLayout + `" Target="../slideLayouts/slideLayout2.xml"/>` +
	`<Relationship Id="rId3" Type="` + relBase + `theme" Target="../theme/theme1.xml"/>` +
	`</Relationships>`

var titleLayoutXML = xmlHeader + `<p:sldLayout ` + nsDecl + ` type="title" preserve="1"><p:cSld name="Title Slide"><p:spTree>` + groupProps +
	phShape(2, "Title 1", `type="ctrTitle"`, 914400, 1828800, SlideWidth-2*914400, 1600200) +
	phShape(3, "Subtitle 2", `type="subTitle" idx="1"`, 914400, 3581400, SlideWidth-2*914400, 1143000) +
	`</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`

var titleOnlyLayoutXML = xmlHeader + `<p:sldLayout ` + nsDecl + ` type="titleOnly" preserve="1"><p:cSld name="Title Only"><p:spTree>` + groupProps +
	phShape(2, "Title 1", `type="title"`, marginX, titleY, bodyW, titleH) +
	`</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`

const layoutRels = xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
	`<Relationship Id="rId1" Type="` + relBase + `slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`

// themeXML is a complete, plain Office theme: PowerPoint refuses a master
// whose theme lacks any of the colour, font or format schemes.
var themeXML = func() string {
	solid := func(c string) string { return `<a:solidFill><a:schemeClr val="` + c + `"/></a:solidFill>` }
	line := func(w int) string {
		return fmt.Sprintf(`<a:ln w="%d" cap="flat" cmpd="sng" algn="ctr">%s<a:prstDash val="solid"/></a:ln>`, w, solid("phClr"))
	}
	return xmlHeader + `<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Agentura"><a:themeElements>` +
		`<a:clrScheme name="Agentura"><a:dk1><a:sysClr val="windowText" lastClr="000000"/></a:dk1><a:lt1><a:sysClr val="window" lastClr="FFFFFF"/></a:lt1>` +
		`<a:dk2><a:srgbClr val="1F2A44"/></a:dk2><a:lt2><a:srgbClr val="E7E6E6"/></a:lt2>` +
		`<a:accent1><a:srgbClr val="2F5597"/></a:accent1><a:accent2><a:srgbClr val="ED7D31"/></a:accent2><a:accent3><a:srgbClr val="A5A5A5"/></a:accent3>` +
		`<a:accent4><a:srgbClr val="FFC000"/></a:accent4><a:accent5><a:srgbClr val="5B9BD5"/></a:accent5><a:accent6><a:srgbClr val="70AD47"/></a:accent6>` +
		`<a:hlink><a:srgbClr val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink></a:clrScheme>` +
		`<a:fontScheme name="Agentura"><a:majorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>` +
		`<a:minorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>` +
		`<a:fmtScheme name="Agentura"><a:fillStyleLst>` + solid("phClr") + solid("phClr") + solid("phClr") + `</a:fillStyleLst>` +
		`<a:lnStyleLst>` + line(6350) + line(12700) + line(19050) + `</a:lnStyleLst>` +
		`<a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst>` +
		`<a:bgFillStyleLst>` + solid("phClr") + solid("phClr") + solid("phClr") + `</a:bgFillStyleLst></a:fmtScheme>` +
		`</a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>`
}()
